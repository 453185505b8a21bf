/**
 * A loopback HTTP endpoint through which a test in another process (the Python client's pytest
 * suite) kills and restarts a test's private database engine at the moment it chooses:
 *   POST /kill?target=storage|front      SIGKILLs the PostgreSQL postmaster or the wire server now
 *   POST /kill-during-insert?target=storage|front&db=D&collection=C&skip=N
 *                                        arms a kill for the moment the API sends the engine its
 *                                        (N+1)th insert command into D.C from now on: the engine
 *                                        dies with that write under way, whatever the load
 *   POST /restart                        starts the engine again; answers once it serves clients
 * Each answers 204 when done (or armed), 500 with the error's text otherwise. Kills and restarts
 * run one at a time, in the order they came, so a restart asked for after a kill follows it.
 *
 * The armed kill watches the API's driver commands (its client needs `monitorCommands=true`).
 */
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { CommandStartedEvent, MongoClient } from 'mongodb';
import type { KillTarget, PrivateMongo } from './private-mongo.js';

export interface EngineControl {
  /** Base URL of the endpoint, e.g. http://127.0.0.1:41234 */
  url: string;
  /** What was done, in order ("kill front during insert 3 into d.c", "restart 3120 ms"). */
  log: string[];
  close(): Promise<void>;
}

interface ArmedKill {
  target: KillTarget;
  db: string;
  collection: string;
  /** Insert commands into db.collection still to let through before the kill. */
  skip: number;
  seen: number;
}

const TARGETS: readonly string[] = ['storage', 'front'];

function killTarget(url: URL): KillTarget | undefined {
  const target = url.searchParams.get('target') ?? 'storage';
  return TARGETS.includes(target) ? (target as KillTarget) : undefined;
}

/** `db` is the engine; `apiClient` the API's driver client, whose insert commands an armed kill watches. */
export async function serveEngineControl(db: PrivateMongo, apiClient: MongoClient): Promise<EngineControl> {
  const log: string[] = [];
  let queue: Promise<unknown> = Promise.resolve();
  const serialised = (operation: () => Promise<void>): Promise<void> => {
    const next = queue.then(operation, operation);
    queue = next.catch(() => undefined);
    return next;
  };
  const kill = (target: KillTarget, why: string) =>
    serialised(async () => {
      await db.kill(target);
      log.push(`kill ${target}${why}`);
    });

  let armed: ArmedKill | undefined;
  const onCommand = (event: CommandStartedEvent) => {
    const a = armed;
    if (a === undefined || event.commandName !== 'insert') return;
    if (event.databaseName !== a.db || event.command.insert !== a.collection) return;
    a.seen += 1;
    if (a.seen <= a.skip) return;
    armed = undefined;
    // SIGKILL right as the command leaves: the engine dies before it can answer it.
    kill(a.target, ` during insert ${a.seen} into ${a.db}.${a.collection}`).catch((err: unknown) =>
      log.push(`armed kill failed: ${String(err)}`),
    );
  };
  apiClient.on('commandStarted', onCommand);

  const server: Server = createServer((request, response) => {
    const url = new URL(request.url ?? '/', 'http://control');
    const target = killTarget(url);
    let operation: (() => Promise<void>) | undefined;
    if (request.method === 'POST' && url.pathname === '/kill' && target !== undefined) {
      operation = () => kill(target, '');
    } else if (request.method === 'POST' && url.pathname === '/kill-during-insert' && target !== undefined) {
      const dbName = url.searchParams.get('db');
      const collection = url.searchParams.get('collection');
      if (dbName !== null && collection !== null) {
        operation = async () => {
          armed = { target, db: dbName, collection, skip: Number(url.searchParams.get('skip') ?? 0), seen: 0 };
        };
      }
    } else if (request.method === 'POST' && url.pathname === '/restart') {
      operation = () =>
        serialised(async () => {
          const t0 = Date.now();
          await db.restart();
          log.push(`restart ${Date.now() - t0} ms`);
        });
    }
    request.resume();
    if (operation === undefined) {
      response.writeHead(404).end('POST /kill, /kill-during-insert or /restart (see engine-control.ts)\n');
      return;
    }
    operation().then(
      () => response.writeHead(204).end(),
      (err: unknown) => {
        log.push(`${url.pathname} failed: ${String(err)}`);
        response.writeHead(500, { 'content-type': 'text/plain' }).end(String(err));
      },
    );
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    log,
    async close() {
      apiClient.off('commandStarted', onCommand);
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await queue;
    },
  };
}
