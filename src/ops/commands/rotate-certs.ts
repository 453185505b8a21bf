/**
 * ops/rotate-certs: issues every server and client certificate again: the server certificates
 * from the existing server CA (default) or a new one (--new-ca), the client certificates always
 * from a new client CA, so that every earlier client certificate is refused from now on (there
 * are no revocation lists; see appliance/certificates.ts). Restarts the services that use them,
 * checks that the whole stack is healthy, and otherwise puts the previous certificates back and
 * restarts again. Then rebuilds the worker bundles made for remote hosts: they cannot connect
 * until they run the new bundle.
 */
import { cp, mkdir, readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { writeComposeServiceFiles } from '../../installation/compose-files.js';
import { inspectCertificates, reissueCertificates } from '../../installation/certificates.js';
import { waitUntilHealthy, type Installation } from '../../installation/health.js';
import { topologyOf } from '../../installation/install-config.js';
import { openRuntime } from '../../installation/runner/open-runtime.js';
import { rebuildRecordedBundles } from './worker-bundle.js';
import { CommandError, DIR_HELP, EXIT, loadInstallation, parseCommandArgs, type Command } from './common.js';

export const ROTATE_HELP = `Usage: ops/rotate-certs [--dir DIR] [--new-ca | --keep-client-ca] [--days N] [--if-expiring-within N]

Re-issues the RabbitMQ and MongoDB server certificates (from the existing server CA) and the
API and worker client certificates (from a new client CA: every earlier client certificate is
refused from then on, e.g. one from a lost or stolen worker bundle), restarts the services,
verifies the stack is healthy and rolls back to the previous certificates if it is not. Worker
bundles made earlier (ops/worker-bundle) are rebuilt: remote workers stay disconnected until
they run the new bundle.

${DIR_HELP}
  --new-ca             a new server CA too (e.g. after its key leaked): clients must also
                       trust the new CA, which the rebuilt worker bundles carry
  --keep-client-ca     renewal instead of rotation: the client certificates come from the
                       current client CA, so earlier ones stay accepted until they expire
                       (what the --cert-renewal schedule runs: remote workers keep working
                       until they get the new bundle). Not after a key may have leaked.
  --days N             validity of the new certificates (default: the installation's setting)
  --if-expiring-within N   rotate only when some certificate expires within N days
  --health-timeout S   seconds to wait for the stack to become healthy (default 180)
Exit codes: 0 rotated (or nothing to do), 1 failed (previous certificates restored), 2 usage
error, 3 no installation.
`;

async function restartAndCheck(inst: Installation, timeoutMs: number): Promise<void> {
  if (inst.config.runtime === 'compose') await writeComposeServiceFiles(inst.layout, inst.config, inst.secrets);
  const runtime = await openRuntime(inst.layout, inst.config);
  await runtime.startOrRestart();
  await waitUntilHealthy(inst, timeoutMs);
}

export const rotateCerts: Command = async (argv) => {
  const { values } = parseCommandArgs(argv, {
    'new-ca': { type: 'boolean', default: false },
    'keep-client-ca': { type: 'boolean', default: false },
    days: { type: 'string' },
    'if-expiring-within': { type: 'string' },
    'health-timeout': { type: 'string' },
  });
  if (values.help) {
    process.stdout.write(ROTATE_HELP);
    return EXIT.ok;
  }
  const inst = await loadInstallation(values.dir);
  const validityDays = values.days === undefined ? inst.config.certValidityDays : Number(values.days);
  if (!Number.isInteger(validityDays) || validityDays < 1 || validityDays > 3650)
    throw new CommandError('--days needs a whole number from 1 to 3650', EXIT.usage);
  const keepClientCa = values['keep-client-ca'];
  if (keepClientCa && values['new-ca']) throw new CommandError('--new-ca replaces both CAs: it cannot keep the client CA', EXIT.usage);
  const timeoutMs = 1000 * (values['health-timeout'] === undefined ? 180 : Number(values['health-timeout']));
  if (!(timeoutMs > 0)) throw new CommandError('--health-timeout needs a number of seconds', EXIT.usage);

  if (values['if-expiring-within'] !== undefined) {
    const within = Number(values['if-expiring-within']);
    if (!Number.isInteger(within) || within < 0) throw new CommandError('--if-expiring-within needs a whole number of days', EXIT.usage);
    const soonest = Math.min(...(await inspectCertificates(inst.layout.certsDir)).map((r) => r.daysLeft));
    if (soonest >= within) {
      process.stdout.write(`Nothing to do: every certificate is valid for ${soonest} more days (threshold ${within}).\n`);
      return EXIT.ok;
    }
  }

  const certs = inst.layout.certsDir;
  const stamp = new Date().toISOString().replace(/[:.]/g, '-');
  const previous = join(inst.layout.root, 'certs.previous', stamp);
  await mkdir(join(inst.layout.root, 'certs.previous'), { recursive: true, mode: 0o700 });
  await cp(certs, previous, { recursive: true, preserveTimestamps: true });
  process.stdout.write(`Previous certificates saved in ${previous}\n`);

  const authorities = await reissueCertificates(certs, {
    publicHost: inst.config.publicHost,
    validityDays,
    newCa: values['new-ca'],
    keepClientCa,
    topology: topologyOf(inst.config),
  });
  const clientCaKept = authorities['client-ca'] === 'kept';
  process.stdout.write(
    `Issued new server certificates from ${authorities.ca === 'kept' ? 'the existing' : 'a new'} server CA and new client certificates from ` +
      `${clientCaKept ? 'the existing client CA (earlier ones stay accepted until they expire)' : 'a new client CA (earlier ones are refused from now on)'} ` +
      `(valid ${validityDays} days). Restarting ...\n`,
  );
  try {
    await restartAndCheck(inst, timeoutMs);
  } catch (err) {
    process.stderr.write(
      `The stack is not healthy with the new certificates: ${(err as Error).message}\nRolling back to ${previous} ...\n`,
    );
    for (const name of await readdir(certs)) await rm(join(certs, name), { force: true });
    await cp(previous, certs, { recursive: true, preserveTimestamps: true });
    try {
      await restartAndCheck(inst, timeoutMs);
      process.stderr.write('Rolled back: the previous certificates are in place and the stack is healthy.\n');
    } catch (rollbackErr) {
      process.stderr.write(`Rolled back the files, but the stack is still unhealthy: ${(rollbackErr as Error).message}\n`);
    }
    return EXIT.failed;
  }
  process.stdout.write('All services healthy with the new certificates.\n');

  const rebuilt = await rebuildRecordedBundles(inst, (line) => process.stdout.write(`${line}\n`));
  const whenRefused = clientCaKept
    ? 'the old bundles keep working until their certificates expire'
    : 'the old bundles are refused from now on';
  if (rebuilt.length > 0) {
    process.stdout.write(
      `\nREMOTE WORKERS NEED THE NEW BUNDLE. Rebuilt: ${rebuilt.join(', ')}\n` +
        `Copy each to its host and run its run-worker.sh again: ${whenRefused}.\n`,
    );
  } else {
    process.stdout.write(
      `\nRemote workers (if any) need a new bundle (${whenRefused}): ops/worker-bundle --dir ${inst.layout.root} --host <host>\n`,
    );
  }
  return EXIT.ok;
};
