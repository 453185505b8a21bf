/**
 * What test files get from test/support/global-setup.ts: connection details of the real TLS
 * services started once per run. Plain JSON, because vitest serialises provided values.
 */
import { inject } from 'vitest';
import type { LocalServices } from '../../src/local-services/services.js';

export interface TestServices {
  stateDir: string;
  /** ca.pem, server.*, api.*, worker.* (see src/local-services/certificate-set.ts). */
  certDir: string;
  mongo: LocalServices['mongo'];
  broker: LocalServices['broker'];
  /** The service's configuration variables (MONGO_*, BROKER_*), client certificate `api`. */
  env: Record<string, string>;
}

declare module 'vitest' {
  export interface ProvidedContext {
    services: TestServices;
  }
}

export function testServices(): TestServices {
  const services = inject('services');
  if (!services) throw new Error('test services missing: run this file in the `integration` vitest project');
  return services;
}
