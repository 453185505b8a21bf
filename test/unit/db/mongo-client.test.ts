import { describe, expect, it } from 'vitest';
import type { MongoSettings } from '../../../src/config/connections.js';
import { mongoClientOptions } from '../../../src/db/mongo-client.js';

const base: MongoSettings = { uri: 'mongodb://localhost:1/', authSource: 'admin', queryTimeLimitMs: 1_000, operationTimeoutMs: 2_000 };

describe('mongoClientOptions', () => {
  it('reads strings without the per-character UTF-8 check (the engine stores valid UTF-8 only)', () => {
    const options = mongoClientOptions(base);
    expect(options.enableUtf8Validation).toBe(false);
  });

  it('adds login and TLS only when the settings have them', () => {
    const options = mongoClientOptions({ ...base, username: 'u', password: 'p', tlsCaFile: '/ca.pem' });
    expect(options).toMatchObject({ auth: { username: 'u', password: 'p' }, authSource: 'admin', tls: true, tlsCAFile: '/ca.pem' });
    expect(options.tlsCertificateKeyFile).toBeUndefined();
  });

  it('bounds the wait for a pooled connection by the operation deadline', () => {
    expect(mongoClientOptions(base).waitQueueTimeoutMS).toBe(2_000);
  });
});
