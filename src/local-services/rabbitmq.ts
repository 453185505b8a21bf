/**
 * A private RabbitMQ node (Debian's rabbitmq-server package) with an AMQPS-only listener that
 * requires client certificates. Private means: its own node name, config, data, logs, Erlang
 * distribution port and plugins file, so it neither touches nor depends on a system broker and
 * several can run side by side (parallel test runs).
 *
 * As root, the node runs as the `rabbitmq` user, like the Debian wrapper /usr/sbin/rabbitmq-server
 * does, so everything it reads or writes is handed to that user, including its own copy of the
 * server key (a root-owned 0600 key makes the node refuse to boot). We drop privileges with
 * `setpriv` instead of going through the wrapper because the wrapper uses `su`, which starts the
 * node in a session of its own: signals to our process group would not reach it, and `su` only
 * passes SIGTERM to its shell, so the Erlang VM would outlive us. With `setpriv` (an exec, no fork)
 * the VM stays in the process group we manage. As any other user the node runs as that user.
 */
import { execFile } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { chmod, copyFile, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { isIP } from 'node:net';
import { join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import amqp from 'amqplib';
import { freePort, waitForPort } from './ports.js';
import { findExecutable, retryUntilReady, spawnManaged, startupError, type ManagedProcess, type ServerHandle } from './processes.js';
import { assertTraversable, commandAs, handOver, runAsServiceUser, type RunAs } from './service-user.js';
import { narrowLogFiles } from './service-logs.js';

const execFileAsync = promisify(execFile);

export interface RabbitMqOptions {
  /** Working directory of this node (config, data, logs, certificate copies). */
  dir: string;
  /** The CA that signed the server certificate (trusted by the health check's client). */
  caFile: string;
  /**
   * The CA client certificates must chain to (default: caFile): RabbitMQ's `cacertfile`. The
   * appliance passes its client CA, replaced at every rotation, so old client certificates are
   * refused. (The server's own chain needs no CA here: clients hold the server CA.)
   */
  clientCaFile?: string;
  /** Server certificate and key. */
  certFile: string;
  keyFile: string;
  /** A client certificate issued by the same CA, used for the health check. */
  clientCertFile: string;
  clientKeyFile: string;
  port?: number;
  username: string;
  password: string;
  vhost: string;
  /** Listen address; default 127.0.0.1. '0.0.0.0' or '::' listen on all interfaces. */
  bindHost?: string;
  /**
   * A definitions file (users, vhosts, permissions) imported at every boot. On a blank node RabbitMQ
   * then creates no default user or vhost, so the file must define the `username` given above.
   */
  definitionsFile?: string;
  startTimeoutMs?: number;
  /** Node name (default: derived from `dir`). Nodes of one cluster need distinct names. */
  nodeName?: string;
  /** The Erlang cookie (default: a random one per node). Nodes of one cluster share it. */
  erlangCookie?: string;
  /**
   * Every node of the cluster this node belongs to (classic-config peer discovery): on its first
   * boot a node with a blank data directory joins the first of them that answers.
   */
  clusterNodes?: string[];
  /**
   * Erlang distribution (node to node, and the CLI to the node) over TLS, each side verifying
   * the other's certificate against `caFile`: the accepting side shows certFile (serverAuth),
   * the connecting side clientCertFile (clientAuth; Erlang checks the purpose). Default: plain
   * TCP on loopback.
   */
  distributionTls?: DistributionTls;
}

export interface DistributionTls {
  caFile: string;
  certFile: string;
  keyFile: string;
  clientCertFile: string;
  clientKeyFile: string;
}

export interface RabbitMqHandle extends ServerHandle {
  nodeName: string;
  /** amqps://localhost:<port>/<vhost>, without credentials. */
  url: string;
  /** Ends the node at once with SIGKILL (no clean shutdown): a crash, for failover tests. */
  kill(): Promise<void>;
  /** Runs `rabbitmqctl <args>` against this node; resolves with its standard output. */
  ctl(args: string[]): Promise<string>;
  /**
   * Creates these vhosts on the running node (existing ones are kept) and gives `username` every
   * permission on each, in one definitions import: e.g. a vhost per test worker, so that the
   * remote control, events and queues of one worker's tests never reach another's.
   */
  addVhosts(vhosts: string[], username: string): Promise<void>;
}

/** The package's real scripts; /usr/sbin/rabbitmq-* are the `su` wrappers around them. */
const PACKAGE_BIN = '/usr/lib/rabbitmq/bin';
const SERVICE_USER = 'rabbitmq';

interface Commands {
  server: string;
  ctl: string;
  runAs: RunAs;
}

async function resolveCommands(): Promise<Commands> {
  const server = findExecutable(join(PACKAGE_BIN, 'rabbitmq-server'));
  const ctl = findExecutable(join(PACKAGE_BIN, 'rabbitmqctl'));
  if (!server || !ctl) {
    throw new Error('rabbitmq-server is not installed (run `npm run prepare-test-env` or `apt-get install rabbitmq-server`)');
  }
  return { server, ctl, runAs: await runAsServiceUser(SERVICE_USER, 'rabbitmq-server') };
}

/** Unique per working directory and stable across restarts, so a dev node finds its data again. */
function nodeNameFor(dir: string): string {
  const hash = createHash('sha256').update(resolve(dir)).digest('hex').slice(0, 10);
  return `cybercom-${hash}@localhost`;
}

function listenerAddress(bindHost: string, port: number): string {
  // A bare port listens on every interface; cuttlefish splits host and port at the last colon,
  // so IPv6 literals are written unbracketed (e.g. `::1:5671`).
  if (bindHost === '0.0.0.0' || bindHost === '::' || bindHost === '*') return String(port);
  return `${isIP(bindHost) === 6 ? bindHost : bindHost.replace(/^\[|\]$/g, '')}:${port}`;
}

function rabbitmqConf(o: {
  listen: string;
  caFile: string;
  certFile: string;
  keyFile: string;
  username: string;
  password: string;
  vhost: string;
  definitionsFile?: string;
  clusterNodes?: string[];
}): string {
  // Values are written verbatim by cuttlefish's parser; reject what would break the line format.
  for (const [key, value] of Object.entries(o)) {
    if (value !== undefined && /[\r\n]/.test(String(value))) throw new Error(`rabbitmq.conf value for ${key} contains a line break`);
  }
  return [
    'listeners.tcp = none',
    `listeners.ssl.default = ${o.listen}`,
    `ssl_options.cacertfile = ${o.caFile}`,
    `ssl_options.certfile = ${o.certFile}`,
    `ssl_options.keyfile = ${o.keyFile}`,
    'ssl_options.verify = verify_peer',
    'ssl_options.fail_if_no_peer_cert = true',
    'ssl_options.versions.1 = tlsv1.3',
    'ssl_options.versions.2 = tlsv1.2',
    `default_user = ${o.username}`,
    `default_pass = ${o.password}`,
    `default_vhost = ${o.vhost}`,
    'default_user_tags.administrator = true',
    'default_permissions.configure = .*',
    'default_permissions.read = .*',
    'default_permissions.write = .*',
    // Everything goes to stdout, which spawnManaged writes to <dir>/rabbitmq.log.
    'log.console = true',
    'log.console.level = info',
    'log.console.use_colors = off', // a file, not a terminal
    'log.file = false',
    // Imported on every boot, so changed passwords in the file reach existing users on a restart.
    ...(o.definitionsFile ? [`load_definitions = ${o.definitionsFile}`] : []),
    ...(o.clusterNodes && o.clusterNodes.length > 0 ? clusterFormation(o.clusterNodes) : []),
    '',
  ].join('\n');
}

/** Classic-config peer discovery: the members are listed, nothing is looked up. */
export function clusterFormation(nodes: string[]): string[] {
  return [
    'cluster_formation.peer_discovery_backend = classic_config',
    ...nodes.map((node, i) => `cluster_formation.classic_config.nodes.${i + 1} = ${node}`),
    // A node cut off from the majority pauses, so clients fail over to the majority instead of
    // writing to a minority; a cluster of three keeps working with one node down.
    'cluster_partition_handling = pause_minority',
  ];
}

/** `-ssl_dist_optfile` terms: both sides present a certificate and verify the other's. */
function distributionTlsOptions(tls: DistributionTls): string {
  const side = (name: 'server' | 'client', certFile: string, keyFile: string): string =>
    `{${name}, [{cacertfile, ${JSON.stringify(tls.caFile)}}, {certfile, ${JSON.stringify(certFile)}}, {keyfile, ${JSON.stringify(keyFile)}}, {verify, verify_peer}, {secure_renegotiate, true}${name === 'server' ? ', {fail_if_no_peer_cert, true}' : ''}]}`;
  return `[${side('server', tls.certFile, tls.keyFile)}, ${side('client', tls.clientCertFile, tls.clientKeyFile)}].\n`;
}

function epmdBinary(): string | undefined {
  return findExecutable('epmd', ['/usr/bin', '/usr/lib/erlang/bin']);
}

/** Names registered with the local epmd, or undefined when no epmd is running. */
async function epmdNames(): Promise<string[] | undefined> {
  const epmd = epmdBinary();
  if (!epmd) return undefined;
  try {
    const { stdout } = await execFileAsync(epmd, ['-names'], { timeout: 5000 });
    return [...stdout.matchAll(/^name (\S+) at port/gm)].map((m) => m[1] ?? '');
  } catch {
    return undefined;
  }
}

/** Ends the epmd daemon our node started, unless another node (e.g. a parallel test run) uses it. */
async function killEpmdIfUnused(): Promise<void> {
  const names = await epmdNames();
  const epmd = epmdBinary();
  if (names === undefined || names.length > 0 || !epmd) return;
  // `epmd -kill` refuses while a node is registered: no race with a node registering meanwhile.
  await execFileAsync(epmd, ['-kill'], { timeout: 5000 }).catch(() => undefined);
}

/** Log in over AMQPS with the client certificate and open a channel: the broker is usable. */
async function amqpLogin(o: {
  port: number;
  username: string;
  password: string;
  vhost: string;
  ca: Buffer;
  cert: Buffer;
  key: Buffer;
}): Promise<void> {
  const connection = await amqp.connect(
    { protocol: 'amqps', hostname: 'localhost', port: o.port, username: o.username, password: o.password, vhost: o.vhost, heartbeat: 0 },
    { ca: [o.ca], cert: o.cert, key: o.key, servername: 'localhost', timeout: 5000 },
  );
  try {
    const channel = await connection.createChannel();
    await channel.close();
  } finally {
    await connection.close().catch(() => undefined);
  }
}

export async function startRabbitMq(opts: RabbitMqOptions): Promise<RabbitMqHandle> {
  const { server: serverCommand, ctl, runAs } = await resolveCommands();
  const dir = resolve(opts.dir);
  const nodeName = opts.nodeName ?? nodeNameFor(dir);
  const [port, distPort] = await Promise.all([opts.port ?? freePort(), freePort()]);
  const timeoutMs = opts.startTimeoutMs ?? 90_000;

  const tlsDir = join(dir, 'tls');
  const dataDir = join(dir, 'data');
  const logDir = join(dir, 'log');
  await mkdir(dir, { recursive: true, mode: 0o755 });
  await Promise.all([tlsDir, dataDir, logDir].map((d) => mkdir(d, { recursive: true, mode: 0o750 })));
  // The node's own copies, owned by the user it runs as, whatever protects the originals.
  // Only the CA that client certificates must chain to: RabbitMQ's cacertfile is its client trust.
  const tls = { caFile: join(tlsDir, 'client-ca.pem'), certFile: join(tlsDir, 'server.pem'), keyFile: join(tlsDir, 'server.key') };
  await Promise.all([
    copyFile(opts.clientCaFile ?? opts.caFile, tls.caFile),
    copyFile(opts.certFile, tls.certFile),
    copyFile(opts.keyFile, tls.keyFile),
  ]);
  // The node's copy of the definitions (password hashes): readable by its user only.
  const definitionsFile = opts.definitionsFile ? join(dir, 'definitions.json') : undefined;
  if (opts.definitionsFile && definitionsFile) {
    await copyFile(opts.definitionsFile, definitionsFile);
    await chmod(definitionsFile, 0o600);
  }

  const configBase = join(dir, 'rabbitmq'); // RabbitMQ appends .conf
  const pluginsFile = join(dir, 'enabled_plugins');
  const envFile = join(dir, 'rabbitmq-env.conf');
  const conf = rabbitmqConf({
    listen: listenerAddress(opts.bindHost ?? '127.0.0.1', port),
    ...tls,
    username: opts.username,
    password: opts.password,
    vhost: opts.vhost,
    definitionsFile,
    clusterNodes: opts.clusterNodes,
  });
  // Distribution TLS: the node's own copies, like the AMQPS files above.
  const distTls = opts.distributionTls
    ? {
        caFile: join(tlsDir, 'dist-ca.pem'),
        certFile: join(tlsDir, 'dist-server.pem'),
        keyFile: join(tlsDir, 'dist-server.key'),
        clientCertFile: join(tlsDir, 'dist-client.pem'),
        clientKeyFile: join(tlsDir, 'dist-client.key'),
        optFile: join(dir, 'dist-tls.conf'),
      }
    : undefined;
  if (opts.distributionTls && distTls) {
    const source = opts.distributionTls;
    await Promise.all(
      (['caFile', 'certFile', 'keyFile', 'clientCertFile', 'clientKeyFile'] as const).map((k) => copyFile(source[k], distTls[k])),
    );
    await writeFile(distTls.optFile, distributionTlsOptions(distTls), { mode: 0o600 });
  }
  await writeFile(`${configBase}.conf`, conf, { mode: 0o600 }); // holds the password
  await writeFile(pluginsFile, '[].\n', { mode: 0o644 }); // no plugins: faster boot, no extra ports
  // Shadows /etc/rabbitmq/rabbitmq-env.conf. The node's scripts source it as shell code, so its
  // umask is what the node makes its files with: its own logs in log/ (the upgrade log, crash
  // dumps) and its data are its user's alone, like the log spawnManaged writes.
  await writeFile(envFile, 'umask 0077\n', { mode: 0o644 });
  await narrowLogFiles(logDir);
  const logFile = join(dir, 'rabbitmq.log');
  await assertTraversable(runAs, dir, SERVICE_USER);
  await handOver(runAs, [
    dir,
    tlsDir,
    dataDir,
    logDir,
    ...Object.values(tls),
    `${configBase}.conf`,
    pluginsFile,
    envFile,
    ...(definitionsFile ? [definitionsFile] : []),
    ...(distTls ? Object.values(distTls) : []),
  ]);

  // The node's own Erlang cookie (its HOME is its directory): nodes of other installations on
  // this host, which would share the `rabbitmq` user's cookie, cannot control this one.
  const cookieFile = join(dir, '.erlang.cookie');
  if (opts.erlangCookie !== undefined) {
    await rm(cookieFile, { force: true }); // read-only once written
    await writeFile(cookieFile, opts.erlangCookie, { mode: 0o400 });
  } else {
    await writeFile(cookieFile, randomBytes(24).toString('hex'), { mode: 0o400, flag: 'wx' }).catch((err: NodeJS.ErrnoException) => {
      if (err.code !== 'EEXIST') throw err;
    });
  }
  await handOver(runAs, [cookieFile]);

  const epmdWasRunning = (await epmdNames()) !== undefined;
  // Erlang distribution (epmd on 4369, the node's distribution port, the CLI's own) is for the
  // CLI on this host only: loopback, whatever address the AMQPS listener is given.
  const loopbackDistribution = [
    '-kernel inet_dist_use_interface {127,0,0,1}',
    ...(distTls ? ['-proto_dist inet_tls', `-ssl_dist_optfile ${distTls.optFile}`] : []),
  ].join(' ');
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    ...runAs.env,
    HOME: dir,
    ERL_EPMD_ADDRESS: '127.0.0.1',
    RABBITMQ_SERVER_ADDITIONAL_ERL_ARGS: loopbackDistribution,
    RABBITMQ_CTL_ERL_ARGS: loopbackDistribution,
    RABBITMQ_NODENAME: nodeName,
    RABBITMQ_CONFIG_FILE: configBase,
    RABBITMQ_ADVANCED_CONFIG_FILE: join(dir, 'advanced.config'),
    RABBITMQ_CONF_ENV_FILE: envFile,
    RABBITMQ_MNESIA_BASE: dataDir,
    RABBITMQ_LOG_BASE: logDir,
    RABBITMQ_DIST_PORT: String(distPort),
    RABBITMQ_ENABLED_PLUGINS_FILE: pluginsFile,
    ERL_CRASH_DUMP: join(logDir, 'erl_crash.dump'),
  };

  const started = Date.now();
  let server: ManagedProcess | undefined;
  const stopNode = async (): Promise<void> => {
    if (server?.isRunning()) {
      // A clean stop flushes the message store. `rabbitmqctl stop` returns once the node has
      // accepted the request; the node process exits a moment later.
      const [command, args] = commandAs(runAs, ctl, ['-n', nodeName, 'stop']);
      await execFileAsync(command, args, { env, timeout: 30_000 }).catch(() => undefined);
      const timer = new AbortController();
      await Promise.race([server.exited, sleep(20_000, undefined, { signal: timer.signal }).catch(() => undefined)]);
      timer.abort();
    }
    // Fallback for a node that did not stop: SIGTERM (graceful in Erlang), then SIGKILL; either
    // way this returns once nothing of the node's process group is left.
    await server?.terminate(10_000);
    if (!epmdWasRunning) await killEpmdIfUnused();
  };

  try {
    const [command, args] = commandAs(runAs, serverCommand);
    server = await spawnManaged(command, args, { logFile, env, cwd: dir });
    await waitForPort('127.0.0.1', port, timeoutMs, { signal: server.exitSignal });
    const [ca, cert, key] = await Promise.all([readFile(opts.caFile), readFile(opts.clientCertFile), readFile(opts.clientKeyFile)]);
    // The listener opens a moment before the default user and vhost are guaranteed to exist.
    const login = { port, username: opts.username, password: opts.password, vhost: opts.vhost, ca, cert, key };
    await retryUntilReady(() => amqpLogin(login), { started, timeoutMs, stopped: server.exitSignal });
  } catch (err) {
    await stopNode().catch(() => undefined);
    throw await startupError(`RabbitMQ node ${nodeName} on port ${port}`, err, logFile, /\[error\]|BOOT FAILED|ERROR:/);
  }

  let stopping: Promise<void> | undefined;
  return {
    pid: (server as ManagedProcess).pid,
    port,
    nodeName,
    url: `amqps://localhost:${port}/${encodeURIComponent(opts.vhost)}`,
    logFile,
    exited: (server as ManagedProcess).exited,
    stop: () => (stopping ??= stopNode()),
    kill: async () => {
      process.kill(-(server as ManagedProcess).pid, 'SIGKILL');
      await (server as ManagedProcess).exited;
      // Bookkeeping only: the group is gone, so this returns at once.
      await (stopping ??= stopNode());
    },
    ctl: async (args) => {
      const [command, commandArgs] = commandAs(runAs, ctl, ['-n', nodeName, ...args]);
      const { stdout } = await execFileAsync(command, commandArgs, { env, timeout: 60_000 });
      return stdout;
    },
    addVhosts: async (vhosts, username) => {
      // No secrets in it (no users, only names and permissions); the CLI reads it as the node's user.
      const file = join(dir, `vhosts-${randomBytes(4).toString('hex')}.json`);
      const definitions = {
        vhosts: vhosts.map((name) => ({ name })),
        permissions: vhosts.map((vhost) => ({ user: username, vhost, configure: '.*', write: '.*', read: '.*' })),
      };
      await writeFile(file, JSON.stringify(definitions), { mode: 0o600 });
      try {
        await handOver(runAs, [file]);
        const [command, commandArgs] = commandAs(runAs, ctl, ['-n', nodeName, 'import_definitions', file]);
        await execFileAsync(command, commandArgs, { env, timeout: 60_000 });
      } finally {
        await rm(file, { force: true });
      }
    },
  };
}
