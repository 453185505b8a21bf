/**
 * The final check: the API's health endpoint through the public URL (the proxy for compose, the
 * API's own port for local processes), addressed by the public host name but connected to this
 * machine, so the check does not depend on DNS. A certificate that is not (yet) trusted, e.g.
 * while ACME issuance is pending, is reported as a warning; any other failure fails the install.
 */
import { getWithHost } from '../../installation/health.js';
import { publicBaseUrl } from '../../installation/install-config.js';
import type { InstallContext, Step } from '../step.js';

export const publicHealth: Step = {
  id: 'public-health',
  title: 'Health through the public URL',
  phase: 'apply',
  relevantServices: ['api', 'proxy'],
  skip: (ctx) => (ctx.noStart ? '--no-start' : undefined),
  async run(ctx: InstallContext) {
    const base = new URL(publicBaseUrl(ctx.config));
    const hostHeader = base.host;
    const target = new URL(`${base.protocol}//127.0.0.1:${base.port || (base.protocol === 'https:' ? 443 : 80)}/api/health/`);
    const servername = base.hostname.replace(/^\[|\]$/g, '');
    let answer;
    try {
      answer = await getWithHost(target, hostHeader, { servername, timeoutMs: 10_000 });
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code ?? '';
      if (base.protocol !== 'https:' || !/CERT|SELF_SIGNED|UNABLE_TO|ERR_TLS/.test(code)) throw err;
      ctx.progress.warn(
        `the certificate for ${servername} is not trusted yet (${code}); with ACME, check DNS and that port 80/443 reach this machine`,
      );
      answer = await getWithHost(target, hostHeader, { servername, timeoutMs: 10_000, insecure: true });
    }
    if (answer.status !== 200) throw new Error(`${base.origin}/api/health/ answered ${answer.status}: ${answer.body.slice(0, 300)}`);
    return `${base.origin}/api/health/ ok`;
  },
};
