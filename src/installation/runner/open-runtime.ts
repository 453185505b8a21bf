/**
 * The runtime an installation uses, loaded on demand so compose-only code does not load for a
 * local installation and the other way round. Kept apart from the ServiceRuntime interface, which
 * both runtimes implement, so the dependencies point one way.
 */
import { topologyOf, type InstallConfig } from '../install-config.js';
import type { InstallLayout } from '../layout.js';
import type { ServiceRuntime } from './service-runtime.js';

export async function openRuntime(layout: InstallLayout, config: InstallConfig): Promise<ServiceRuntime> {
  if (config.runtime === 'compose') {
    const { ComposeRuntime } = await import('./compose-runtime.js');
    return new ComposeRuntime(layout, topologyOf(config));
  }
  const { LocalRuntime } = await import('./local-runtime.js');
  return new LocalRuntime(layout);
}
