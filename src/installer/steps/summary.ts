/** The closing summary: where the service is, where its secrets and certificates are, what next. */
import { apiProcessesReason } from '../../config/api-processes.js';
import { apiProcessesOf, publicBaseUrl } from '../../installation/install-config.js';
import type { InstallContext, Step } from '../step.js';

export const summary: Step = {
  id: 'summary',
  title: 'Summary',
  phase: 'apply',
  async run(ctx: InstallContext) {
    const { layout, config } = ctx;
    const dirFlag = `--dir ${layout.root}`;
    const base = publicBaseUrl(config);
    const lines = [
      ctx.noStart ? 'Configured (not started: --no-start).' : `Service: ${base}/api/   (admin site ${base}/api/admin)`,
      ...ctx.summary,
      `API processes: ${apiProcessesOf(config)} (${config.apiProcesses === undefined ? apiProcessesReason() : 'chosen with --api-processes'})`,
      `Runtime: ${config.runtime}; broker amqps://<host>:${config.ports.broker}, database mongodb://<host>:${config.ports.database} (TLS + client certificates)`,
      `Secrets: ${layout.secretsFile} (0600); settings: ${layout.configDir}`,
      `Certificates: ${layout.certsDir} (CA, rabbitmq, mongodb, api, worker)`,
      `Install log: ${layout.installLog}`,
      'Next:',
      `  ops/status ${dirFlag}                 health of every service`,
      `  ops/logs ${dirFlag} --service api     logs (api, worker, ${config.runtime === 'compose' ? 'rabbitmq, mongo, proxy' : 'broker, database, supervisor'})`,
      `  ops/cert-status ${dirFlag}            certificate expiry`,
      `  ops/worker-bundle ${dirFlag} --host <remote host>   bundle for a remote worker`,
      `  ops/backup ${dirFlag}                 back up databases, configuration and certificates`,
      `  ./installer ${dirFlag}                re-run to change settings or upgrade (data, secrets and certificates are kept)`,
    ];
    lines.push(`  ops/services stop ${dirFlag}          stop everything (start, restart)`);
    for (const line of lines) ctx.progress.line(`  ${line}`);
    return 'done';
  },
};
