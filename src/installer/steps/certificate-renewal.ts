/**
 * Opt-in (--cert-renewal): a daily job that runs ops/cert-status and, when a certificate expires
 * within 30 days, ops/rotate-certs --keep-client-ca (a renewal: remote workers' current
 * certificates stay accepted until they expire), logging both to logs/cert-renewal.log. A systemd timer when
 * systemd runs (or is asked for), else a cron entry. With --cert-renewal none an earlier job of
 * this installation is removed.
 */
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { repositoryRoot } from '../../installation/layout.js';
import { writeIfChanged } from '../../installation/write-if-changed.js';
import { run } from '../../installation/runner/compose-command.js';
import type { InstallContext, Step } from '../step.js';

export const RENEWAL_WITHIN_DAYS = 30;

function unitName(root: string): string {
  return `cybercom-cert-renewal-${createHash('sha256').update(root).digest('hex').slice(0, 8)}`;
}

export function renewalScript(root: string): string {
  const repo = repositoryRoot();
  return [
    '#!/bin/sh',
    `# Daily certificate check of ${root}, installed by ./installer --cert-renewal.`,
    `exec >>'${join(root, 'logs', 'cert-renewal.log')}' 2>&1`,
    'echo "== $(date -Iseconds) certificate check"',
    `'${join(repo, 'ops', 'cert-status')}' --dir '${root}' --days ${RENEWAL_WITHIN_DAYS}`,
    'status=$?',
    // 1 = something expires within the window; other non-zero codes are errors worth a look, not a rotation.
    // Renewal, not rotation: the client CA stays, so remote workers keep working with their
    // current certificates (which expire within the window) until they get the rebuilt bundle.
    `if [ "$status" -eq 1 ]; then '${join(repo, 'ops', 'rotate-certs')}' --dir '${root}' --keep-client-ca; exit $?; fi`,
    'exit "$status"',
    '',
  ].join('\n');
}

function systemdRunning(): boolean {
  return existsSync('/run/systemd/system');
}

export const certificateRenewal: Step = {
  id: 'certificate-renewal',
  title: 'Certificate renewal schedule',
  phase: 'apply',
  async run(ctx: InstallContext) {
    const root = ctx.layout.root;
    const name = unitName(root);
    const cronDir = ctx.env.CYBERCOM_CRON_DIR ?? '/etc/cron.d';
    const systemdDir = ctx.env.CYBERCOM_SYSTEMD_DIR ?? '/etc/systemd/system';
    const script = join(ctx.layout.configDir, 'renew-certificates.sh');
    const cronFile = join(cronDir, name);
    const units = [join(systemdDir, `${name}.service`), join(systemdDir, `${name}.timer`)];
    const mode = ctx.config.certRenewal === 'auto' ? (systemdRunning() ? 'systemd' : 'cron') : ctx.config.certRenewal;

    if (mode === 'none') {
      const existing = [cronFile, ...units].filter((f) => existsSync(f));
      if (existing.length === 0) return 'not requested';
      if (existsSync(units[1] as string) && systemdRunning()) await run('systemctl', ['disable', '--now', `${name}.timer`]);
      await Promise.all(existing.map((f) => rm(f, { force: true })));
      return 'removed';
    }
    await writeIfChanged(script, renewalScript(root), 0o700);
    if (mode === 'cron') {
      if (!existsSync(cronDir)) throw new Error(`${cronDir} does not exist: install cron, or use --cert-renewal systemd`);
      await writeIfChanged(
        cronFile,
        `# cybercom certificate check of ${root} (./installer --cert-renewal)\n17 3 * * * root ${script}\n`,
        0o644,
      );
      return `cron entry ${cronFile}`;
    }
    await writeIfChanged(
      units[0] as string,
      `[Unit]\nDescription=cybercom certificate check (${root})\n\n[Service]\nType=oneshot\nExecStart=${script}\n`,
      0o644,
    );
    await writeIfChanged(
      units[1] as string,
      `[Unit]\nDescription=Daily cybercom certificate check (${root})\n\n[Timer]\nOnCalendar=daily\nRandomizedDelaySec=1h\nPersistent=true\n\n[Install]\nWantedBy=timers.target\n`,
      0o644,
    );
    if (systemdRunning() && systemdDir === '/etc/systemd/system') {
      for (const args of [['daemon-reload'], ['enable', '--now', `${name}.timer`]]) {
        const result = await run('systemctl', args);
        if (result.code !== 0) throw new Error(`systemctl ${args.join(' ')} failed: ${result.stderr.trim()}`);
      }
    }
    return `systemd timer ${name}.timer`;
  },
};
