/**
 * Proves the stand-in images on their own, before (and independently of) the product's
 * compose.yaml: the broker and the MongoDB-wire server come up healthy with TLS and client
 * certificates on a user network, a container reaches both by service name, and from the host
 * the published ports accept only TLS sessions with a client certificate of our CA.
 *
 *   DOCKER_HOST=unix:///run/podman/podman.sock npx tsx test/containers/smoke.ts
 *
 * Needs the images of build-standins.sh. Removes its containers, network and volumes at the end,
 * unless SMOKE_KEEP=1 (to look at a failure; `docker compose -p cybercom-smoke down -v` later).
 */
import { randomBytes } from 'node:crypto';
import { chownSync, cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  createCertificateAuthority,
  issueClientCertificate,
  issueServerCertificate,
  serverSubjectAltNames,
} from '../../src/pki/certificates.js';
import { run, runToCompletion } from './support/engine.js';
import { Report, assert } from './support/phases.js';
import {
  AMQP_HEADER,
  amqpSession,
  expectRefused,
  isPlaintextAnswer,
  mongoHelloMessage,
  mongoSession,
  plaintextExchange,
  type Endpoint,
} from './support/tls-probes.js';

const here = dirname(fileURLToPath(import.meta.url));
const repoRoot = join(here, '..', '..');
const composeFile = join(here, 'smoke', 'compose.yaml');
/** uid/gid the official rabbitmq and mongo images (and our stand-ins) run their servers as. */
const SERVICE_UID = 999;

function writeOwned(path: string, data: string, mode: number, uid = SERVICE_UID): void {
  writeFileSync(path, data, { mode });
  chownSync(path, uid, uid);
}

async function main(): Promise<number> {
  const report = new Report();
  const dir = mkdtempSync(join(tmpdir(), 'cybercom-smoke-'));
  const env = { SMOKE_DIR: dir, REPO_ROOT: repoRoot };
  const compose = (...args: string[]) => run('docker', ['compose', '-f', composeFile, ...args], { env, timeoutMs: 300_000 });
  const password = randomBytes(12).toString('hex');
  try {
    const tls = await report.phase('certificates and configuration', async () => {
      const ca = await createCertificateAuthority({ commonName: 'smoke CA' });
      const server = await issueServerCertificate(ca, { commonName: 'smoke server', ...serverSubjectAltNames() });
      const client = await issueClientCertificate(ca, { commonName: 'smoke client' });
      for (const sub of ['broker-certs', 'db-certs']) {
        mkdirSync(join(dir, sub), { mode: 0o750 });
        chownSync(join(dir, sub), SERVICE_UID, SERVICE_UID);
        writeOwned(join(dir, sub, 'ca.pem'), ca.certPem, 0o644);
        writeOwned(join(dir, sub, 'server.pem'), server.certPem, 0o644);
        writeOwned(join(dir, sub, 'server.key'), server.keyPem, 0o600);
      }
      writeOwned(join(dir, 'mongo-password'), password, 0o600);
      writeFileSync(
        join(dir, 'rabbitmq.conf'),
        [
          'listeners.tcp = none',
          'listeners.ssl.default = 5671',
          'ssl_options.cacertfile = /etc/rabbitmq/certs/ca.pem',
          'ssl_options.certfile = /etc/rabbitmq/certs/server.pem',
          'ssl_options.keyfile = /etc/rabbitmq/certs/server.key',
          'ssl_options.verify = verify_peer',
          'ssl_options.fail_if_no_peer_cert = true',
          'default_user = smoke',
          `default_pass = ${password}`,
          '',
        ].join('\n'),
        { mode: 0o644 },
      );
      const probe = join(dir, 'probe');
      mkdirSync(join(probe, 'certs'), { recursive: true });
      mkdirSync(join(probe, 'node_modules'));
      cpSync(join(here, 'smoke', 'probe.mjs'), join(probe, 'probe.mjs'));
      writeFileSync(join(probe, 'certs', 'ca.pem'), ca.certPem);
      writeFileSync(join(probe, 'certs', 'client.pem'), client.certPem);
      writeFileSync(join(probe, 'certs', 'client.key'), client.keyPem);
      writeFileSync(join(probe, 'certs', 'client-combined.pem'), client.certPem + client.keyPem);
      writeFileSync(join(probe, 'certs', 'password'), password);
      const other = await createCertificateAuthority({ commonName: 'stranger CA' });
      const stranger = await issueClientCertificate(other, { commonName: 'stranger' });
      return { ca: ca.certPem, client, stranger };
    });

    await report.phase('services up (healthchecks)', async () => {
      await report.check('broker and database healthy (compose up --wait)', async () => {
        await compose('up', '-d', '--wait', 'rabbitmq', 'mongo');
      });
    });

    await report.phase('in-network probe', async () => {
      await report.check('a container reaches both by service name over TLS', async () => {
        const { code, output } = await runToCompletion({
          image: 'localhost/cybercom-test/node:latest',
          cmd: ['node', 'probe.mjs'],
          workingDir: '/probe',
          network: 'cybercom-smoke_default',
          binds: [`${join(dir, 'probe')}:/probe:ro`, `${join(repoRoot, 'node_modules')}:/probe/node_modules:ro`],
        });
        console.log(
          output
            .trim()
            .split('\n')
            .map((l) => `       ${l}`)
            .join('\n'),
        );
        assert(code === 0, `probe exited with ${code}`);
      });
    });

    await report.phase('published ports from the host', async () => {
      const published = async (service: string, port: number): Promise<Endpoint> => {
        const out = (await compose('port', service, String(port))).stdout.trim();
        const m = /:(\d+)$/.exec(out);
        assert(m, `no published port for ${service}:${port} (${out})`);
        return { host: '127.0.0.1', port: Number(m[1]), servername: 'localhost' };
      };
      const broker = await published('rabbitmq', 5671);
      const db = await published('mongo', 27017);
      const good = { ca: tls.ca, cert: tls.client.certPem, key: tls.client.keyPem };
      await report.check('broker: AMQPS session with client certificate', () => amqpSession(broker, 'smoke', password, '/', good));
      await report.check('broker: refused without client certificate', async () => {
        await expectRefused('broker without certificate', () => amqpSession(broker, 'smoke', password, '/', { ca: tls.ca }));
      });
      await report.check('broker: refused with a certificate from another CA', async () => {
        await expectRefused('broker with stranger certificate', () =>
          amqpSession(broker, 'smoke', password, '/', { ca: tls.ca, cert: tls.stranger.certPem, key: tls.stranger.keyPem }),
        );
      });
      await report.check('broker: no plaintext AMQP', async () => {
        const answer = await plaintextExchange(broker, AMQP_HEADER);
        assert(!isPlaintextAnswer(answer), `plaintext answer: ${answer.subarray(0, 16).toString('hex')}`);
      });
      await report.check('database: TLS session with client certificate', () => mongoSession(db, 'smoke', password, good));
      await report.check('database: refused without client certificate', async () => {
        await expectRefused('database without certificate', () => mongoSession(db, 'smoke', password, { ca: tls.ca }, 3000));
      });
      await report.check('database: no plaintext MongoDB protocol', async () => {
        const answer = await plaintextExchange(db, mongoHelloMessage());
        assert(!isPlaintextAnswer(answer), `plaintext answer: ${answer.subarray(0, 16).toString('hex')}`);
      });
    });
  } catch {
    await compose('logs', '--no-color', '--tail', '60')
      .then((r) => console.log(r.stdout + r.stderr))
      .catch(() => undefined);
  } finally {
    if (process.env.SMOKE_KEEP === '1') {
      console.log(`kept: SMOKE_DIR=${dir} REPO_ROOT=${repoRoot} docker compose -f ${composeFile} ...`);
    } else
      await report.phase('clean-up', async () => {
        await compose('down', '--volumes', '--remove-orphans', '--timeout', '10').catch((err: Error) => console.log(err.message));
        rmSync(dir, { recursive: true, force: true });
      });
    console.log(`\n${report.summary()}`);
  }
  console.log(`\n${report.passed} passed, ${report.failed} failed`);
  return report.failed === 0 && report.passed > 0 ? 0 : 1;
}

process.exitCode = await main();
