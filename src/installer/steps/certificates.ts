/**
 * Certificates: the server and client CAs, the RabbitMQ and MongoDB server certificates and the API and worker
 * client certificates, issued with the one PKI module. Valid ones are kept (byte for byte) unless
 * --force-certs; missing, expiring or mis-named ones (e.g. after a new public host) are issued.
 */
import { ensureCertificates } from '../../installation/certificates.js';
import { topologyOf } from '../../installation/install-config.js';
import type { InstallContext, Step } from '../step.js';

export const certificates: Step = {
  id: 'certificates',
  title: 'Certificates',
  phase: 'apply',
  async run(ctx: InstallContext) {
    const actions = await ensureCertificates(ctx.layout.certsDir, {
      publicHost: ctx.config.publicHost,
      validityDays: ctx.config.certValidityDays,
      force: ctx.forceCerts,
      topology: topologyOf(ctx.config),
    });
    const issued = Object.entries(actions)
      .filter(([, a]) => a === 'issued')
      .map(([n]) => n);
    if (actions['client-ca'] === 'adopted') {
      ctx.progress.detail('client CA: the server CA, as before this version (the next ops/rotate-certs gives the clients their own CA)');
    }
    if (issued.length === 0) return 'kept (all valid)';
    ctx.progress.detail(`issued: ${issued.join(', ')} (valid ${ctx.config.certValidityDays} days)`);
    return `issued ${issued.length}, kept ${Object.keys(actions).length - issued.length}`;
  },
};
