/**
 * A second "host" on this machine for a remote worker: its own network namespace, joined to this
 * host by one veth pair and allowed to reach nothing but the published broker and database ports
 * (iptables in this host's namespace), and its own container engine (a second Podman API service
 * with separate storage, started inside the namespace), so a worker bundle must really be loaded
 * there and its containers really dial the server over that link.
 *
 *   this host  <veth hostIf: hostAddress/30> ---- <veth: remoteAddress/30>  remote namespace
 *                                                                              podman service
 *                                                                              (own storage)
 *                                                                              └─ worker container (NAT)
 *
 * The remote's /etc/hosts (from /etc/netns/<name>/) names this host as `hostNames`, so those
 * names resolve there (for its commands, its engine and the containers it creates) as DNS would
 * for a real remote machine. Commands run there with `ip netns exec`, which mounts those files
 * over /etc/. The engine does not: `ip netns exec` also remounts /sys, which takes the cgroup
 * hierarchies away from the container runtime, so the engine enters only the network namespace
 * and bind-mounts the two files itself in a mount namespace of its own.
 */
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { run } from './engine.js';

export interface RemoteHostOptions {
  name: string;
  /** A /30 that is unused on this machine: .1 is this host's end, .2 the remote's. */
  subnetBase: string;
  /** TCP ports of this host the remote may reach (published by the stack). */
  allowedPorts: number[];
  /** Extra /etc/hosts lines for the remote (name → this host's address). */
  hostNames: string[];
}

export class RemoteHost {
  readonly hostAddress: string;
  readonly remoteAddress: string;
  readonly dockerHost: string;
  private readonly hostIf: string;
  private readonly remoteIf: string;
  private readonly chainIn: string;
  private readonly chainFwd: string;
  private readonly stateDir: string;
  private readonly storageDir: string;
  private readonly etcDir: string;
  private servicePid: number | undefined;

  constructor(private readonly opts: RemoteHostOptions) {
    const base = opts.subnetBase.split('.').slice(0, 3).join('.');
    const last = Number(opts.subnetBase.split('.')[3]);
    this.hostAddress = `${base}.${last + 1}`;
    this.remoteAddress = `${base}.${last + 2}`;
    // Interface names are limited to 15 characters.
    this.hostIf = `${opts.name.slice(0, 11)}-h`;
    this.remoteIf = `${opts.name.slice(0, 11)}-r`;
    this.chainIn = `${opts.name.toUpperCase()}-IN`.slice(0, 28);
    this.chainFwd = `${opts.name.toUpperCase()}-FWD`.slice(0, 28);
    this.stateDir = `/run/${opts.name}`;
    this.storageDir = `/var/lib/${opts.name}`;
    this.etcDir = `/etc/netns/${opts.name}`;
    this.dockerHost = `unix://${this.stateDir}/podman.sock`;
  }

  /** Runs a command inside the namespace. */
  exec(command: string, args: string[], opts: Parameters<typeof run>[2] = {}): ReturnType<typeof run> {
    return run('ip', ['netns', 'exec', this.opts.name, command, ...args], opts);
  }

  private podmanArgs(): string[] {
    return [
      '--root',
      `${this.storageDir}/storage`,
      '--runroot',
      `${this.stateDir}/runroot`,
      '--tmpdir',
      `${this.stateDir}/tmp`,
      '--network-config-dir',
      `${this.stateDir}/networks`,
    ];
  }

  async setUp(): Promise<void> {
    const { name } = this.opts;
    const ipt = (...args: string[]) => run('iptables', ['-w', ...args]);
    await run('ip', ['netns', 'add', name]);
    await run('ip', ['link', 'add', this.hostIf, 'type', 'veth', 'peer', 'name', this.remoteIf]);
    await run('ip', ['link', 'set', this.remoteIf, 'netns', name]);
    await run('ip', ['addr', 'add', `${this.hostAddress}/30`, 'dev', this.hostIf]);
    await run('ip', ['link', 'set', this.hostIf, 'up']);
    await this.exec('ip', ['addr', 'add', `${this.remoteAddress}/30`, 'dev', this.remoteIf]);
    await this.exec('ip', ['link', 'set', this.remoteIf, 'up']);
    await this.exec('ip', ['link', 'set', 'lo', 'up']);
    await this.exec('ip', ['route', 'add', 'default', 'via', this.hostAddress]);

    // Only connections to the allowed published ports pass; they are DNATed to the stack's
    // containers (so they go through FORWARD). Everything else from the remote is refused:
    // this host's own services (INPUT), container addresses, other networks (FORWARD).
    await ipt('-N', this.chainFwd);
    for (const port of this.opts.allowedPorts) {
      await ipt(
        '-A',
        this.chainFwd,
        '-p',
        'tcp',
        '-m',
        'conntrack',
        '--ctstate',
        'DNAT',
        '--ctorigdst',
        this.hostAddress,
        '--ctorigdstport',
        String(port),
        '-j',
        'ACCEPT',
      );
    }
    await ipt('-A', this.chainFwd, '-j', 'REJECT');
    await ipt('-I', 'FORWARD', '1', '-i', this.hostIf, '-j', this.chainFwd);
    await ipt('-N', this.chainIn);
    await ipt('-A', this.chainIn, '-j', 'REJECT');
    await ipt('-I', 'INPUT', '1', '-i', this.hostIf, '-j', this.chainIn);

    mkdirSync(this.etcDir, { recursive: true });
    writeFileSync(
      `${this.etcDir}/hosts`,
      ['127.0.0.1\tlocalhost', ...this.opts.hostNames.map((h) => `${this.hostAddress}\t${h}`), ''].join('\n'),
    );
    // No name server is reachable from the remote; names come from its hosts file only.
    writeFileSync(`${this.etcDir}/resolv.conf`, '# remote test host: names come from /etc/hosts\n');

    mkdirSync(this.stateDir, { recursive: true });
    const socket = this.dockerHost.slice('unix://'.length);
    const engine = [
      `mount --bind ${this.etcDir}/hosts /etc/hosts`,
      `mount --bind ${this.etcDir}/resolv.conf /etc/resolv.conf`,
      `exec podman ${this.podmanArgs().join(' ')} system service --time=0 ${this.dockerHost}`,
    ].join(' && ');
    // nsenter, unshare and sh all exec: the pid printed is the engine's.
    const service = await run('bash', [
      '-c',
      `nohup nsenter --net=/run/netns/${name} unshare --mount --propagation slave sh -c '${engine}' ` +
        `>${this.stateDir}/service.log 2>&1 & echo $!`,
    ]);
    this.servicePid = Number(service.stdout.trim());
    writeFileSync(`${this.stateDir}/service.pid`, `${this.servicePid}\n`);
    for (let i = 0; i < 100; i++) {
      const ping = await run('curl', ['-sf', '--max-time', '2', '--unix-socket', socket, 'http://d/_ping'], { allowFailure: true });
      if (ping.code === 0) return;
      await sleep(200);
    }
    throw new Error(`the remote host's container engine did not answer (${this.stateDir}/service.log)`);
  }

  /** Can the remote open a TCP connection to this host's address and port? */
  async canConnect(port: number, address = this.hostAddress): Promise<boolean> {
    const r = await this.exec('timeout', ['5', 'bash', '-c', `exec 3<>/dev/tcp/${address}/${port}`], { allowFailure: true });
    return r.code === 0;
  }

  /** Removes everything setUp made; each part on its own, so a partial set-up is undone too. */
  async tearDown(): Promise<void> {
    const attempt = async (what: string, fn: () => Promise<unknown>): Promise<void> => {
      try {
        await fn();
      } catch (err) {
        console.log(`  remote host clean-up: ${what}: ${(err as Error).message.split('\n')[0]}`);
      }
    };
    // Containers go while the engine runs (their network lives in its namespace).
    const remoteDocker = (...args: string[]) =>
      run('docker', args, { env: { DOCKER_HOST: this.dockerHost }, allowFailure: true, timeoutMs: 120_000 });
    await attempt('containers', async () => {
      const ids = (await remoteDocker('ps', '--all', '--quiet')).stdout.split('\n').filter(Boolean);
      if (ids.length > 0) await remoteDocker('rm', '--force', ...ids);
    });
    // A later process (cleaning up after CYBERCOM_E2E_KEEP=1) finds the engine by its pid file.
    this.servicePid ??= existsSync(`${this.stateDir}/service.pid`)
      ? Number(readFileSync(`${this.stateDir}/service.pid`, 'utf8'))
      : undefined;
    if (this.servicePid !== undefined) {
      await attempt('engine', async () => {
        process.kill(this.servicePid!, 'SIGTERM');
        for (let i = 0; i < 50; i++) {
          try {
            process.kill(this.servicePid!, 0);
          } catch {
            break;
          }
          await sleep(100);
        }
      });
    }
    if (existsSync(this.storageDir)) {
      await attempt('storage', () =>
        run('podman', [...this.podmanArgs(), 'system', 'reset', '--force'], { allowFailure: true, timeoutMs: 120_000 }),
      );
    }
    rmSync(this.storageDir, { recursive: true, force: true });
    rmSync(this.stateDir, { recursive: true, force: true });
    const ipt = (...args: string[]) => run('iptables', ['-w', ...args], { allowFailure: true });
    await attempt('firewall', async () => {
      await ipt('-D', 'FORWARD', '-i', this.hostIf, '-j', this.chainFwd);
      await ipt('-D', 'INPUT', '-i', this.hostIf, '-j', this.chainIn);
      for (const chain of [this.chainFwd, this.chainIn]) {
        await ipt('-F', chain);
        await ipt('-X', chain);
      }
    });
    await attempt('link', () => run('ip', ['link', 'del', this.hostIf], { allowFailure: true }));
    await attempt('namespace', () => run('ip', ['netns', 'del', this.opts.name], { allowFailure: true }));
    rmSync(this.etcDir, { recursive: true, force: true });
  }
}
