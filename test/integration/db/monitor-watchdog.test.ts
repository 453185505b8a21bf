/**
 * A driver client whose server monitor stopped has its monitoring started again. The stop is
 * the driver's own fault, reproduced here as it happens when an engine dies: a check is sent on a connection
 * whose socket the engine has just closed (destroyed, its 'close' not yet emitted); the write
 * neither fails nor completes and the monitor never checks again. The first test pins that
 * fault down (should a driver release fix it, it fails, and the watchdog can go); the second
 * shows the watchdog bringing the monitoring back.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { MongoClient } from 'mongodb';
import { afterEach, describe, expect, it } from 'vitest';
import { mongoEnvSchema, toMongoSettings } from '../../../src/config/connections.js';
import { mongoClientOptions } from '../../../src/db/mongo-client.js';
import { watchServerMonitoring, type MonitorWatchdog } from '../../../src/db/monitor-watchdog.js';
import { createLogger } from '../../../src/log/logger.js';
import { testServices } from '../../support/services.js';
import { until } from '../../support/until.js';

const clients: MongoClient[] = [];
const watchdogs: MonitorWatchdog[] = [];

afterEach(async () => {
  for (const w of watchdogs.splice(0)) w.close();
  for (const c of clients.splice(0)) await c.close();
});

interface Checks {
  started: number;
  ended: number;
  lastEnded: number;
}

async function connectedClient(): Promise<{ client: MongoClient; checks: Checks }> {
  const settings = toMongoSettings(mongoEnvSchema.parse(testServices().env));
  const client = new MongoClient(settings.uri, mongoClientOptions(settings));
  clients.push(client);
  const checks: Checks = { started: 0, ended: 0, lastEnded: 0 };
  client.on('serverHeartbeatStarted', () => checks.started++);
  const ended = () => {
    checks.ended++;
    checks.lastEnded = Date.now();
  };
  client.on('serverHeartbeatSucceeded', ended);
  client.on('serverHeartbeatFailed', ended);
  await client.connect();
  await client.db('admin').command({ ping: 1 });
  return { client, checks };
}

/**
 * Driver internals, for this reproduction only: the monitor's connection is closed the way an
 * engine's exit closes it, and a check is asked for in the same turn, before the socket says so.
 */
async function stallMonitor(client: MongoClient, checks: Checks): Promise<void> {
  // A check asked for sooner than 500 ms after the last one waits (the driver's minimum interval).
  await until(async () => checks.ended > 0 && Date.now() - checks.lastEnded > 600, 10_000, 'a finished check 600 ms ago');
  const servers = (client as unknown as { topology: { s: { servers: Map<string, any> } } }).topology.s.servers;
  const monitor = [...servers.values()][0].monitor;
  expect(monitor.connection, 'the monitor holds a connection').toBeTruthy();
  const startedBefore = checks.started;
  monitor.connection.socket.destroy();
  monitor.requestCheck();
  expect(checks.started, 'a check started on the closing connection').toBe(startedBefore + 1);
}

describe("the driver's server monitoring", () => {
  it('stops for good after a check sent on a connection the engine just closed (the fault)', async () => {
    const { client, checks } = await connectedClient();
    await stallMonitor(client, checks);
    const endedAfter = checks.ended;
    // Checks run every 2 s and each is bounded by the 5 s connect timeout: 12 s is well past both.
    await sleep(12_000);
    expect(checks.ended).toBe(endedAfter);
  }, 30_000);

  it('is started again by the watchdog, and the client works on', async () => {
    const { client, checks } = await connectedClient();
    const watchdog = watchServerMonitoring(client, { name: 'test', logger: createLogger('silent'), stuckAfterMs: 3_000 });
    watchdogs.push(watchdog);
    const topology = (client as unknown as { topology: unknown }).topology;
    await stallMonitor(client, checks);
    const endedAfter = checks.ended;
    await until(async () => watchdog.restarts === 1 && checks.ended > endedAfter, 20_000, 'monitoring after the restart');
    expect((await client.db('admin').command({ ping: 1 })).ok).toBe(1);
    // Only the monitor was started again: the client kept its topology (its pool, cursors, sessions).
    expect((client as unknown as { topology: unknown }).topology).toBe(topology);
    // A client that never stalls is left alone.
    await sleep(4_000);
    expect(watchdog.restarts).toBe(1);
  }, 40_000);
});
