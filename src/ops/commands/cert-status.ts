/**
 * ops/cert-status: every certificate of the installation with subject, names, issuer and expiry.
 * Exit codes: 0 none expires within N days, 1 at least one does (or already has, or does not
 * chain to the CA), 2 usage, 3 no certificates.
 */
import { existsSync } from 'node:fs';
import { inspectCertificates, type CertificateReport } from '../../installation/certificates.js';
import { installLayout } from '../../installation/layout.js';
import { CommandError, DIR_HELP, EXIT, installDir, parseCommandArgs, type Command } from './common.js';

export const DEFAULT_WARN_DAYS = 30;

export const CERT_STATUS_HELP = `Usage: ops/cert-status [--dir DIR] [--days N] [--json]

Lists every certificate in the installation's certs/ directory: subject, subject alternative
names, extended key usage, issuer, expiry and days left.

${DIR_HELP}
  --days N             warn about certificates expiring within N days (default ${DEFAULT_WARN_DAYS})
  --json               machine-readable output
Exit codes: 0 all valid for more than N days, 1 some certificate expires within N days (or has
expired, or does not chain to the CA), 2 usage error, 3 no certificates found.
`;

export function problemsOf(reports: CertificateReport[], days: number): string[] {
  const problems: string[] = [];
  for (const r of reports) {
    if (r.daysLeft < 0) problems.push(`${r.name}: expired ${-r.daysLeft} day(s) ago`);
    else if (r.daysLeft < days) problems.push(`${r.name}: expires in ${r.daysLeft} day(s)`);
    if (!r.issuedByCa) problems.push(`${r.name}: not issued by the installation's CA`);
  }
  return problems;
}

export const certStatus: Command = async (argv) => {
  const { values } = parseCommandArgs(argv, { days: { type: 'string' }, json: { type: 'boolean', default: false } });
  if (values.help) {
    process.stdout.write(CERT_STATUS_HELP);
    return EXIT.ok;
  }
  const days = values.days === undefined ? DEFAULT_WARN_DAYS : Number(values.days);
  if (!Number.isInteger(days) || days < 0) throw new CommandError('--days needs a whole number of days', EXIT.usage);
  const layout = installLayout(installDir(values.dir));
  if (!existsSync(layout.certsDir)) throw new CommandError(`no certificates in ${layout.certsDir}`, EXIT.notInstalled);
  const reports = await inspectCertificates(layout.certsDir);
  if (reports.length === 0) throw new CommandError(`no certificates in ${layout.certsDir}`, EXIT.notInstalled);
  const problems = problemsOf(reports, days);
  if (values.json) {
    process.stdout.write(
      `${JSON.stringify({ directory: layout.certsDir, warnDays: days, ok: problems.length === 0, problems, certificates: reports }, null, 2)}\n`,
    );
  } else {
    for (const r of reports) {
      const names = [...r.dnsNames, ...r.ipAddresses].join(', ') || '-';
      process.stdout.write(
        [
          `${r.name}${r.usedBy ? ` (${r.usedBy})` : ''}`,
          `  subject:  ${r.subject}`,
          `  issuer:   ${r.issuer}`,
          `  names:    ${names}`,
          `  usage:    ${r.extKeyUsage.join(', ') || '-'}`,
          `  expires:  ${r.notAfter} (${r.daysLeft} days left)${r.daysLeft < days ? '  <-- within the warning window' : ''}`,
          '',
        ].join('\n'),
      );
    }
    process.stdout.write(
      problems.length === 0
        ? `All ${reports.length} certificates valid for more than ${days} days.\n`
        : `Attention:\n${problems.map((p) => `  - ${p}`).join('\n')}\nRenew with: ops/rotate-certs --dir ${layout.root}\n`,
    );
  }
  return problems.length === 0 ? EXIT.ok : EXIT.failed;
};
