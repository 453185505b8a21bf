/**
 * Upgrade in place from the previous version, whose local runtime kept the database in FerretDB
 * v1's SQLite files. The previous version is this repository at OLD_COMMIT (git archive), given
 * its FerretDB v1 binary (ops/build-engine.sh --legacy-ferretdb-v1) and this checkout's npm
 * packages (its dependencies are the same). It installs and takes data through its API; then a
 * migration that cannot read the old data fails and leaves them usable by the previous version;
 * then this version's installer, run over the still running old services, migrates, verifies,
 * keeps the old files, and the API serves the same data, token and task history; a later re-run
 * leaves the migrated database alone.
 */
import { execFile } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { copyFile, mkdir, readFile, symlink, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hostMongoClient } from '../../../src/installation/host-connections.js';
import { loadInstallConfig } from '../../../src/installation/install-config.js';
import { installLayout } from '../../../src/installation/layout.js';
import { readSecrets, type Secrets } from '../../../src/installation/secrets.js';
import { adminLogin, call, prepareInstall, REPO, runTool, type RunResult, type TestInstall } from './support.js';

const execFileAsync = promisify(execFile);

/** The last version whose local runtime ran FerretDB v1 on SQLite. */
const OLD_COMMIT = '3f63395';
/** The .build marker that version's ops/prepare-local.sh accepts as its own build (no rebuild). */
const OLD_FERRETDB_BUILD = 'v1.24.2+sqlite-id-index';
const LONG = 600_000;

let target: TestInstall;
let oldRoot: string;
let token: string;
let recordsBefore: unknown[];
let taskId: string;
let objectIdRecord: string;

const databaseDir = (): string => join(target.dir, 'data', 'database');
const sqliteFiles = (dir: string): string[] =>
  existsSync(dir)
    ? readdirSync(dir)
        .filter((f) => f.endsWith('.sqlite'))
        .sort()
    : [];

function succeeded(result: RunResult, what: string): RunResult {
  if (result.code !== 0) throw new Error(`${what} exited ${result.code}:\n${result.output.slice(-6000)}`);
  return result;
}

/** The installation's database as its administrator (the same ports and certificates in both versions). */
async function withDatabase<T>(fn: (client: ReturnType<typeof hostMongoClient>) => Promise<T>): Promise<T> {
  const layout = installLayout(target.dir);
  // The previous version's secrets lack those added since; the administrator's login is all this needs.
  const secrets = (await readSecrets(layout.secretsFile)) as Secrets;
  const client = hostMongoClient(layout, await loadInstallConfig(layout.installConfigFile), secrets, {
    who: 'admin',
    timeoutMs: 10_000,
  });
  try {
    return await fn(client);
  } finally {
    await client.close();
  }
}

beforeAll(async () => {
  try {
    await execFileAsync('git', ['-C', REPO, 'cat-file', '-e', `${OLD_COMMIT}^{commit}`]);
  } catch {
    throw new Error(
      `commit ${OLD_COMMIT} (the previous version) is not in this checkout: this test needs the repository's history (a full clone, not a shallow one)`,
    );
  }
  target = await prepareInstall('upgrade-v1');
  oldRoot = join(dirname(target.dir), 'previous-version');
  await mkdir(oldRoot, { recursive: true });
  await execFileAsync('bash', ['-c', 'git -C "$1" archive "$2" | tar -x -C "$3"', 'archive', REPO, OLD_COMMIT, oldRoot]);
  await symlink(join(REPO, 'node_modules'), join(oldRoot, 'node_modules'));

  // The previous version built FerretDB v1 itself (with a lookup speed-up that does not change the
  // files); the binary from the legacy build path, under that version's marker, spares the rebuild.
  const built = succeeded(
    await runTool('ops/build-engine.sh', ['--legacy-ferretdb-v1'], {}, LONG),
    'ops/build-engine.sh --legacy-ferretdb-v1',
  );
  expect(built.stdout).toMatch(/ferretdb v1: (present|copied|installed)/);
  await mkdir(join(oldRoot, '.cache', 'bin'), { recursive: true });
  await copyFile(join(REPO, '.cache', 'bin', 'ferretdb-v1'), join(oldRoot, '.cache', 'bin', 'ferretdb'));
  await writeFile(join(oldRoot, '.cache', 'bin', 'ferretdb.build'), `${OLD_FERRETDB_BUILD}\n`);

  succeeded(await runTool('installer', ['--yes', ...target.args()], {}, LONG, oldRoot), "the previous version's installer");
}, 900_000);

afterAll(async () => {
  // The services may be the previous version's or this one's: either stops them (same pid file).
  await target?.cleanup();
}, 120_000);

describe('upgrade from an installation on FerretDB v1 (SQLite)', () => {
  it('the previous version keeps its data in FerretDB v1 files and takes records, a task, a token and a session', async () => {
    expect(sqliteFiles(join(databaseDir(), 'data'))).toContain('cybercom.sqlite');
    const jwt = await adminLogin(target.api);
    expect((await call(target.api, '/api/data_store/data/', { method: 'POST', bearer: jwt, body: { database: 'survey' } })).status).toBe(
      201,
    );
    expect(
      (await call(target.api, '/api/data_store/data/survey/', { method: 'POST', bearer: jwt, body: { collection: 'stations' } })).status,
    ).toBe(201);
    const inserted = await call(target.api, '/api/data_store/data/survey/stations/', {
      method: 'POST',
      bearer: jwt,
      body: [
        { _id: 'norman', station: 'Norman', elev: 357, installed: { $date: '2024-01-02T03:04:05Z' } },
        { station: 'Tulsa', elev: 194.5, tags: ['river', 'city'], sensors: { wind: [3, 5] } },
      ],
    });
    expect(inserted.status, inserted.text).toBe(201);
    objectIdRecord = inserted.json.inserted_ids[1] as string;
    expect(objectIdRecord).toMatch(/^[0-9a-f]{24}$/);
    const task = await call(target.api, '/api/queue/run/tasks.write_record/?wait=60', {
      method: 'POST',
      bearer: jwt,
      body: {
        function: 'tasks.write_record',
        queue: 'celery',
        args: [],
        kwargs: { database: 'survey', collection: 'stations', record: { station: 'Stillwater', elev: 300 } },
        tags: ['upgrade'],
      },
    });
    expect(task.status, task.text).toBe(200);
    expect(task.json.status).toBe('SUCCESS');
    taskId = task.json.task_id as string;
    // The API has no index route: an operator would add one with a MongoDB client.
    await withDatabase((client) => client.db('survey').collection('stations').createIndex({ station: 1 }, { name: 'by_station' }));
    const profile = await call(target.api, '/api/user/', { bearer: jwt });
    token = profile.json.authentication['auth-token'] as string;
    expect(token).toMatch(/^[0-9a-f]{40}$/);
    const session = await call(target.api, '/api/auth/login/', {
      method: 'POST',
      body: { username: 'admin', password: 'Correct-Horse-Battery-9' },
    });
    expect(session.status, session.text).toBe(200);
    const list = await call(target.api, '/api/data_store/data/survey/stations/?page_size=100', { token });
    expect(list.status, list.text).toBe(200);
    expect(list.json.count).toBe(3);
    recordsBefore = list.json.results as unknown[];
  });

  it(
    'a migration that cannot read the old data fails, and leaves them in place and usable by the previous version',
    async () => {
      // A FerretDB v1 "binary" that exits at once: the new engine has started by then.
      const failed = await runTool('installer', ['--yes', ...target.args()], { FERRETDB_V1_BIN: '/bin/false' }, LONG);
      expect(failed.code, failed.output.slice(-3000)).toBe(1);
      expect(failed.output).toMatch(/Database migration from FerretDB v1: FAILED/);
      expect(failed.output).toContain('FerretDB v1 (/bin/false)');
      expect(failed.output).toContain(
        `The FerretDB v1 data in ${join(databaseDir(), 'data')} was left as it was and the partial copy was removed`,
      );
      // The new engine did run (its log is kept for the operator); its cluster is gone.
      expect(existsSync(join(databaseDir(), 'migration-failed-ferretdb.log'))).toBe(true);
      expect(sqliteFiles(join(databaseDir(), 'data'))).toEqual(
        expect.arrayContaining(['admin.sqlite', 'cybercom.sqlite', 'survey.sqlite']),
      );
      for (const leftover of ['postgres', 'new', 'migrated-from-ferretdb-v1.json', 'ferretdb-v1-data.old']) {
        expect(existsSync(join(databaseDir(), leftover)), leftover).toBe(false);
      }

      // This version refuses to start an empty database over unmigrated data ...
      const refused = await runTool('ops/services', ['start', '--dir', target.dir]);
      expect(refused.code).not.toBe(0);
      expect(refused.output).toContain('holds FerretDB v1 data that is not migrated yet: run ./installer');
      // ... and the previous version still runs on it.
      succeeded(
        await runTool('ops/services', ['start', '--dir', target.dir], {}, LONG, oldRoot),
        "the previous version's ops/services start",
      );
      const list = await call(target.api, '/api/data_store/data/survey/stations/?page_size=100', { token });
      expect(list.status, list.text).toBe(200);
      expect(list.json.results).toEqual(recordsBefore);
    },
    LONG,
  ); // the installer and the engines take longer than the default on a busy machine

  it(
    're-running the installer over the running old services migrates, verifies and keeps the old files',
    async () => {
      const run = succeeded(await runTool('installer', ['--yes', ...target.args()], {}, LONG), 'the installer');
      const kept = join(databaseDir(), 'ferretdb-v1-data.old');
      expect(run.output).toContain('stopping the running services');
      expect(run.output).toMatch(/survey: 1 collection, 3 documents: counts and content hashes match/);
      expect(run.output).toMatch(
        new RegExp(
          `Database migration from FerretDB v1: migrated 2 databases, \\d+ collections, \\d+ documents \\(verified\\); old data kept in ${kept}`,
        ),
      );
      expect(run.output).toContain(`Old FerretDB v1 data kept in ${kept} (no longer used): delete it once you no longer need it`);
      expect(run.output).toMatch(/Not copied: cybercom\.sessions \(\d+ browser sessions; users log in again\)/);
      // Migrated before the services started: the new engine never served an empty database.
      expect(run.output.indexOf('Database migration from FerretDB v1: migrated')).toBeLessThan(
        run.output.indexOf('Start services: started'),
      );

      const marker = JSON.parse(await readFile(join(databaseDir(), 'migrated-from-ferretdb-v1.json'), 'utf8'));
      expect(marker.from.engine).toBe('FerretDB v1.24.2 (SQLite)');
      expect(marker.oldData).toBe(kept);
      expect(marker.databases.survey.stations).toMatchObject({ documents: 3, indexes: ['by_station {"station":1}'] });
      expect(marker.databases.survey.stations.sha256).toMatch(/^[0-9a-f]{64}$/);
      expect(marker.databases.cybercom.task_log.documents).toBe(1);
      expect(marker.databases.cybercom.authtoken_token.documents).toBe(1);
      expect(marker.skipped['cybercom.sessions']).toBeGreaterThanOrEqual(1);
      const perCollection = Object.values(marker.databases as Record<string, Record<string, { documents: number }>>).flatMap((cols) =>
        Object.values(cols),
      );
      expect(marker.totals.documents).toBe(perCollection.reduce((n, c) => n + c.documents, 0));

      expect(sqliteFiles(join(kept, 'data'))).toEqual(expect.arrayContaining(['admin.sqlite', 'cybercom.sqlite', 'survey.sqlite']));
      expect(existsSync(join(kept, 'state'))).toBe(true);
      expect(existsSync(join(databaseDir(), 'data'))).toBe(false);
      expect(existsSync(join(databaseDir(), 'postgres'))).toBe(true);
      expect(existsSync(join(databaseDir(), 'new'))).toBe(false);
    },
    LONG,
  ); // the installer and the engines take longer than the default on a busy machine

  it(
    'serves the migrated data: the same records, the index, the old token, the task history and the password',
    async () => {
      const list = await call(target.api, '/api/data_store/data/survey/stations/?page_size=100', { token });
      expect(list.status, list.text).toBe(200);
      expect(list.json.results).toEqual(recordsBefore);
      const byString = await call(target.api, '/api/data_store/data/survey/stations/norman/', { token });
      expect(byString.status, byString.text).toBe(200);
      expect(byString.json).toEqual({ _id: 'norman', station: 'Norman', elev: 357, installed: '2024-01-02T03:04:05.000Z' });
      const byObjectId = await call(target.api, `/api/data_store/data/survey/stations/${objectIdRecord}/`, { token });
      expect(byObjectId.status, byObjectId.text).toBe(200);
      expect(byObjectId.json).toMatchObject({ station: 'Tulsa', tags: ['river', 'city'], sensors: { wind: [3, 5] } });

      const { indexes, idType, installedType } = await withDatabase(async (client) => {
        const stations = client.db('survey').collection('stations');
        const tulsa = await stations.findOne({ station: 'Tulsa' });
        const norman = await stations.findOne({ _id: 'norman' as never });
        return {
          indexes: (await stations.listIndexes().toArray()).map((i) => i.name as string),
          idType: tulsa?._id?.constructor?.name,
          installedType: norman?.installed instanceof Date,
        };
      });
      expect(indexes).toContain('by_station');
      expect(idType).toBe('ObjectId');
      expect(installedType).toBe(true);

      const history = await call(target.api, '/api/queue/usertasks/', { token });
      expect(history.status, history.text).toBe(200);
      expect(history.json.results).toEqual([
        expect.objectContaining({ task_id: taskId, task_name: 'tasks.write_record', status: 'SUCCESS', tags: ['upgrade'] }),
      ]);
      expect(await adminLogin(target.api)).toMatch(/^ey/);
      const status = await runTool('ops/status', ['--dir', target.dir, '--json']);
      expect(status.code, status.output).toBe(0);
      expect(JSON.parse(status.stdout).healthy).toBe(true);
    },
    LONG,
  ); // the installer and the engines take longer than the default on a busy machine

  it('a later re-run does not migrate again and still names the kept old files', async () => {
    const run = succeeded(await runTool('installer', ['--yes', ...target.args()], {}, LONG), 'the installer');
    expect(run.output).toContain(
      `Database migration from FerretDB v1: skipped (done earlier; the old files are still kept in ${join(databaseDir(), 'ferretdb-v1-data.old')})`,
    );
    expect(run.output).toMatch(/Start services: restarted/);
    const list = await call(target.api, '/api/data_store/data/survey/stations/?page_size=100', { token });
    expect(list.json.results).toEqual(recordsBefore);
  });
});
