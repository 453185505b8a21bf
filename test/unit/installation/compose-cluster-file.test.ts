/**
 * compose.cluster.yaml, the MongoDB side: three members of the official image with the cluster
 * configuration, TLS and client certificates as on a single node, the keyFile and member
 * certificate the installer writes, a one-shot replica-set initiation the API and the worker wait
 * for, and names that agree with what the installer generates (src/installation/replica-set.ts).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { describe, expect, it } from 'vitest';
import { REPLICA_SET_MEMBERS, REPLICA_SET_NAME, CLUSTER_COMPOSE_FILE } from '../../../src/installation/replica-set.js';

const repo = join(__dirname, '..', '..', '..');
const read = (file: string): string => readFileSync(join(repo, file), 'utf8');

interface Service {
  image?: string;
  command?: string[];
  user?: string;
  ports?: string[];
  healthcheck?: { test: string[] | string };
  depends_on?: Record<string, { condition: string }>;
  environment?: Record<string, string>;
  restart?: string;
  volumes?: string[];
  security_opt?: string[];
  cap_drop?: string[];
  read_only?: boolean;
  tmpfs?: string[];
}

const overlay = parse(read(CLUSTER_COMPOSE_FILE), { merge: true }) as {
  services: Record<string, Service>;
  volumes: Record<string, unknown>;
};
const base = parse(read('compose.yaml'), { merge: true }) as { services: Record<string, Service> };
const services = overlay.services;
const MONGO_FILES = '${CYBERCOM_DIR:?run ./installer first}/compose/mongo:/run/cybercom/mongo:ro';
const CLUSTER_CONF = './docker/mongod.cluster.conf:/etc/mongo/mongod.conf:ro';

interface MongodConf {
  net: { port: number; bindIpAll: boolean; tls: Record<string, string> };
  security: Record<string, string>;
  replication?: { replSetName: string };
  storage: unknown;
}

describe('compose.cluster.yaml (MongoDB replica set)', () => {
  const others = REPLICA_SET_MEMBERS.filter((m) => m !== 'mongo');

  it('adds the other members from the same image, started the same way, with their own volumes and no published port', () => {
    for (const member of others) {
      const s = services[member];
      expect(s, member).toBeDefined();
      expect(s?.image).toBe(base.services.mongo?.image);
      expect(s?.command).toEqual(base.services.mongo?.command);
      expect(s?.ports, member).toBeUndefined();
      expect(s?.volumes).toEqual([`${member}-data:/data/db`, `${member}-config:/data/configdb`, CLUSTER_CONF, MONGO_FILES]);
      expect(Object.keys(overlay.volumes)).toEqual(expect.arrayContaining([`${member}-data`, `${member}-config`]));
      expect(s?.healthcheck?.test).toEqual(base.services.mongo?.healthcheck?.test);
      expect(s?.restart).toBe('unless-stopped');
      expect(s?.security_opt).toEqual(['no-new-privileges:true']);
      // No first-boot init: they start empty and copy the first member's data, users included.
      expect(s?.environment, member).toBeUndefined();
      expect(JSON.stringify(s?.volumes)).not.toContain('docker-entrypoint-initdb.d');
    }
  });

  it('switches the first member to the cluster configuration and leaves the rest of it to compose.yaml', () => {
    expect(services.mongo).toEqual({ volumes: [CLUSTER_CONF] });
    // Same container path as compose.yaml's mount, so Compose replaces that one.
    expect(base.services.mongo?.volumes).toContain('./docker/mongod.conf:/etc/mongo/mongod.conf:ro');
  });

  it('initiates the replica set once all members are healthy, before the API and the worker start', () => {
    const init = services['mongo-replica-set'];
    expect(init?.image).toBe(base.services.mongo?.image);
    expect(init?.restart).toBe('no');
    expect(init?.user).toBe('999:999');
    expect(init).toMatchObject({ read_only: true, cap_drop: ['ALL'], security_opt: ['no-new-privileges:true'] });
    expect(init?.tmpfs).toEqual(expect.arrayContaining(['/data/db', '/data/configdb']));
    expect(init?.volumes).toEqual(['./docker/mongo-replica-set/initiate.sh:/opt/cybercom/initiate-replica-set.sh:ro', MONGO_FILES]);
    expect(init?.command).toEqual(['bash', '/opt/cybercom/initiate-replica-set.sh']);
    expect(init?.depends_on).toEqual(Object.fromEntries(REPLICA_SET_MEMBERS.map((m) => [m, { condition: 'service_healthy' }])));
    for (const client of ['api', 'worker']) {
      expect(services[client]?.depends_on?.['mongo-replica-set'], client).toEqual({ condition: 'service_completed_successfully' });
    }
  });

  it('configures the members like the single node plus the replica set, the keyFile and the member certificate', () => {
    const single = parse(read('docker/mongod.conf')) as MongodConf;
    const cluster = parse(read('docker/mongod.cluster.conf')) as MongodConf;
    const { clusterFile, ...tls } = cluster.net.tls;
    expect(tls).toEqual(single.net.tls);
    expect(cluster.net.tls.mode).toBe('requireTLS');
    expect(cluster.net.tls.clusterCAFile).toBe('/run/cybercom/mongo/client-ca.pem');
    // Written by the installer for the cluster topology (compose-files.ts).
    expect(clusterFile).toBe('/run/cybercom/mongo/member-client.pem');
    expect(cluster.security).toEqual({ authorization: 'enabled', clusterAuthMode: 'keyFile', keyFile: '/run/cybercom/mongo/keyfile' });
    expect(cluster.replication).toEqual({ replSetName: REPLICA_SET_NAME });
    expect(cluster.storage).toEqual(single.storage);
    expect({ port: cluster.net.port, bindIpAll: cluster.net.bindIpAll }).toEqual({
      port: single.net.port,
      bindIpAll: single.net.bindIpAll,
    });
  });

  it('initiates the set the clients are told about: same name, same members, the published one preferred', () => {
    const script = read('docker/mongo-replica-set/initiate.sh');
    expect(script).toMatch(/^set -euo pipefail$/m);
    expect(script).toContain(`_id: "${REPLICA_SET_NAME}"`);
    const hosts = [...script.matchAll(/\{ _id: (\d), host: "([^"]+)", priority: (\d) \}/g)].map((m) => ({
      id: Number(m[1]),
      host: m[2],
      priority: Number(m[3]),
    }));
    expect(hosts.map((h) => h.host)).toEqual(REPLICA_SET_MEMBERS.map((m) => `${m}:27017`));
    expect(hosts.map((h) => h.id)).toEqual([0, 1, 2]);
    expect(Math.max(...hosts.map((h) => h.priority))).toBe(hosts[0]?.priority);
    expect(hosts.filter((h) => h.priority === hosts[0]?.priority)).toHaveLength(1);
    // Over TLS with a client certificate, the password from the file (not the command line).
    expect(script).toContain('--tls --tlsCAFile /run/cybercom/mongo/ca.pem --tlsCertificateKeyFile /run/cybercom/mongo/health-client.pem');
    expect(script).toContain('ADMIN_PASSWORD="$(cat /run/cybercom/mongo/admin-password)"');
    expect(script).toContain('process.env.ADMIN_PASSWORD');
    // Idempotent: an initiated set is left alone.
    expect(script).toContain('NOT_YET_INITIALIZED = 94');
  });

  describe("initiation logic (the script's mongosh code against a stand-in shell)", () => {
    const script = read('docker/mongo-replica-set/initiate.sh');
    const code = script.slice(script.indexOf("--eval '") + "--eval '".length, script.lastIndexOf("'"));
    class Quit {
      constructor(readonly code: number) {}
    }

    /** Runs the code with `state` as the server; returns the commands sent, the log, and how it ended. */
    function run(state: { initiated: boolean; statusError?: { code: number }; primaryAfter: number }) {
      const commands: unknown[] = [];
      const printed: string[] = [];
      const auth: unknown[] = [];
      let polls = 0;
      const db = {
        getSiblingDB: (name: string) => ({ auth: (user: string, password: string) => auth.push([name, user, password]) }),
        adminCommand: (command: unknown) => {
          commands.push(command);
          state.initiated = true;
          return { ok: 1 };
        },
      };
      const rs = {
        status: () => {
          if (state.statusError) throw state.statusError;
          if (!state.initiated) throw Object.assign(new Error('no replset config has been received'), { code: 94 });
          polls++;
          return { members: [{ name: 'mongo:27017', stateStr: polls > state.primaryAfter ? 'PRIMARY' : 'SECONDARY' }] };
        },
      };
      let outcome: 'quit' | Error = new Error('fell through');
      try {
        new Function('db', 'rs', 'print', 'quit', 'sleep', 'process', code)(
          db,
          rs,
          (text: string) => printed.push(text),
          (c: number) => {
            throw new Quit(c);
          },
          () => undefined,
          { env: { ADMIN_PASSWORD: 'from-the-file' } },
        );
      } catch (err) {
        outcome = err instanceof Quit && err.code === 0 ? 'quit' : (err as Error);
      }
      return { commands, printed, auth, outcome };
    }

    it('initiates a new set with the three members, logged in as the administrator', () => {
      const result = run({ initiated: false, primaryAfter: 2 });
      expect(result.outcome).toBe('quit');
      expect(result.auth).toEqual([['admin', 'cybercom-admin', 'from-the-file']]);
      expect(result.commands).toHaveLength(1);
      const config = (result.commands[0] as { replSetInitiate: { _id: string; members: Array<{ host: string }> } }).replSetInitiate;
      expect(config._id).toBe(REPLICA_SET_NAME);
      expect(config.members.map((m) => m.host)).toEqual(REPLICA_SET_MEMBERS.map((m) => `${m}:27017`));
      expect(result.printed.at(-1)).toBe('replica set cybercom: primary mongo:27017');
    });

    it('leaves an initiated set alone (every `up` runs it again)', () => {
      const result = run({ initiated: true, primaryAfter: 0 });
      expect(result.outcome).toBe('quit');
      expect(result.commands).toEqual([]);
      expect(result.printed[0]).toBe('replica set cybercom: already initiated');
    });

    it('fails on any other error, and when no primary is elected in time', () => {
      expect(run({ initiated: true, statusError: { code: 13 }, primaryAfter: 0 }).outcome).toEqual({ code: 13 });
      expect(String(run({ initiated: false, primaryAfter: Number.POSITIVE_INFINITY }).outcome)).toContain('no primary after 180 s');
    });
  });

  it('has no secret inline', () => {
    expect(read(CLUSTER_COMPOSE_FILE)).not.toMatch(/password\s*[:=]\s*["']?[A-Za-z0-9]/i);
    for (const [name, s] of Object.entries(services)) {
      for (const key of Object.keys(s.environment ?? {})) {
        if (/PASS|SECRET|TOKEN|KEY|COOKIE/i.test(key)) expect(key, `${name}.${key}`).toMatch(/_FILE$/);
      }
    }
  });
});
