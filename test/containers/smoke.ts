/**
 * Proves the stand-in images on their own, before (and independently of) the product's
 * compose.yaml: the broker and the MongoDB-wire server come up with TLS and client certificates
 * on a user network, a container reaches both by their names there, and from the host the
 * published ports (on loopback) accept only TLS sessions with a client certificate of our CA.
 * Driven by testcontainers (a Network, GenericContainers, wait strategies).
 *
 *   DOCKER_HOST=unix:///run/podman/podman.sock npx tsx test/containers/smoke.ts
 *
 * Needs the images of build-standins.sh. Removes its containers, their volumes and the network at
 * the end, unless SMOKE_KEEP=1 (to look at a failure; the next run removes them).
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
import { Network, Wait, type StartedNetwork, type StartedTestContainer } from 'testcontainers';
import { removeTestContainers } from './support/leftovers.js';
import { Report, assert } from './support/phases.js';
import { CapturedLogs, LocalContainer, stopAll } from './support/testcontainers.js';
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
/**
 * The user network's name prefix, so a run can remove what a killed one left. A fresh name each
 * run: Podman 4 keeps a network's DNS records under its name, and a record a killed run left
 * would answer for the next network of that name.
 */
const NETWORK_PREFIX = 'cybercom-smoke-';
const TEST = 'smoke';
const IMAGES = {
  rabbitmq: 'localhost/cybercom-test/rabbitmq:latest',
  mongo: 'localhost/cybercom-test/ferretdb:latest',
  node: 'localhost/cybercom-test/node:latest',
};
/** uid/gid the official rabbitmq and mongo images (and our stand-ins) run their servers as. */
const SERVICE_UID = 999;

function writeOwned(path: string, data: string, mode: number, uid = SERVICE_UID): void {
  writeFileSync(path, data, { mode });
  chownSync(path, uid, uid);
}

async function main(): Promise<number> {
  const report = new Report();
  await removeTestContainers(TEST, NETWORK_PREFIX);
  const dir = mkdtempSync(join(tmpdir(), 'cybercom-smoke-'));
  const password = randomBytes(12).toString('hex');
  const logs = { rabbitmq: new CapturedLogs('rabbitmq'), mongo: new CapturedLogs('mongo') };
  let network: StartedNetwork | undefined;
  let rabbitmq: StartedTestContainer | undefined;
  let mongo: StartedTestContainer | undefined;
  let probe: StartedTestContainer | undefined;
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

    await report.phase('services up', async () => {
      const net = await new Network({ nextUuid: () => `${NETWORK_PREFIX}${randomBytes(4).toString('hex')}` }).start();
      network = net;
      const started = await Promise.all(
        [
          report.check('broker up: TLS listener and startup complete', async () => {
            rabbitmq = await new LocalContainer(IMAGES.rabbitmq, TEST)
              .withNetwork(net)
              .withNetworkAliases('rabbitmq')
              .withHostname('rabbitmq')
              .withBindMounts([
                { source: join(dir, 'rabbitmq.conf'), target: '/etc/rabbitmq/rabbitmq.conf', mode: 'ro' },
                { source: join(dir, 'broker-certs'), target: '/etc/rabbitmq/certs', mode: 'ro' },
              ])
              // Every port the image exposes (see withLoopbackPorts); only 5671 is the broker's
              // (listeners.tcp = none, no management plugin), 4369 and 25672 are Erlang's own.
              .withLoopbackPorts(5671, 4369, 5672, 15671, 15672, 25672)
              .withLogConsumer(logs.rabbitmq.consumer)
              // Not the listening-ports strategy: most published ports never listen. The broker logs
              // "startup complete" after its TLS listener started and its default user and vhost exist.
              .withWaitStrategy(Wait.forLogMessage(/Server startup complete/))
              .withStartupTimeout(180_000)
              .start();
          }),
          report.check('database up: TLS port open inside and published', async () => {
            mongo = await new LocalContainer(IMAGES.mongo, TEST)
              .withNetwork(net)
              .withNetworkAliases('mongo')
              .withEnvironment({ MONGO_INITDB_ROOT_USERNAME: 'smoke', MONGO_INITDB_ROOT_PASSWORD_FILE: '/run/secrets/mongo-password' })
              .withCommand([
                'ferretdb',
                '--listen-addr=',
                '--listen-tls=:27017',
                '--listen-tls-cert-file=/etc/mongo/certs/server.pem',
                '--listen-tls-key-file=/etc/mongo/certs/server.key',
                '--listen-tls-ca-file=/etc/mongo/certs/ca.pem',
              ])
              .withBindMounts([
                { source: join(dir, 'db-certs'), target: '/etc/mongo/certs', mode: 'ro' },
                { source: join(dir, 'mongo-password'), target: '/run/secrets/mongo-password', mode: 'ro' },
              ])
              .withLoopbackPorts(27017)
              .withLogConsumer(logs.mongo.consumer)
              // The first start runs a set-up server on the container's loopback only; the
              // published port answers once the real (TLS) server listens.
              .withWaitStrategy(Wait.forListeningPorts())
              .withStartupTimeout(180_000)
              .start();
          }),
        ].map((p) =>
          p.then(
            () => true,
            () => false,
          ),
        ),
      );
      assert(started.every(Boolean), 'a service did not come up');
    });

    await report.phase('in-network probe', async () => {
      await report.check('a container reaches both by name over TLS', async () => {
        assert(network, 'no network');
        probe = await new LocalContainer(IMAGES.node, TEST)
          .withNetwork(network)
          .withBindMounts([
            { source: join(dir, 'probe'), target: '/probe', mode: 'ro' },
            { source: join(repoRoot, 'node_modules'), target: '/probe/node_modules', mode: 'ro' },
          ])
          .withWorkingDir('/probe')
          // Kept running for the probe's exec; with no port to wait for, it is ready once running.
          .withCommand(['sleep', 'infinity'])
          .withWaitStrategy(Wait.forListeningPorts())
          .start();
        const { exitCode, output } = await probe.exec(['node', 'probe.mjs']);
        console.log(
          output
            .trim()
            .split('\n')
            .map((l) => `       ${l}`)
            .join('\n'),
        );
        assert(exitCode === 0, `probe exited with ${exitCode}`);
      });
    });

    await report.phase('published ports from the host', async () => {
      const published = (container: StartedTestContainer | undefined, port: number): Endpoint => {
        assert(container, `no container for port ${port}`);
        return { host: container.getHost(), port: container.getMappedPort(port), servername: 'localhost' };
      };
      const broker = published(rabbitmq, 5671);
      const db = published(mongo, 27017);
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
    console.log(`\n${logs.rabbitmq.tail()}\n\n${logs.mongo.tail()}`);
  } finally {
    if (process.env.SMOKE_KEEP === '1') {
      console.log(`kept: ${dir}, the network ${network?.getName()} and its containers (the next run removes them)`);
    } else
      await report.phase('clean-up', async () => {
        await stopAll([probe, rabbitmq, mongo]);
        await network?.stop().catch((err: Error) => console.log(`  network: ${err.message}`));
        await removeTestContainers(TEST, NETWORK_PREFIX).catch((err: Error) => console.log(`  left over: ${err.message}`));
        rmSync(dir, { recursive: true, force: true });
      });
    console.log(`\n${report.summary()}`);
  }
  console.log(`\n${report.passed} passed, ${report.failed} failed`);
  return report.failed === 0 && report.passed > 0 ? 0 : 1;
}

process.exitCode = await main();
