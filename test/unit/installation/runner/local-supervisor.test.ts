/**
 * The supervisor's start-up order with stand-in services (no processes): services that need none
 * of each other start side by side, a service starts only after the ones it comes after, and a
 * failed first start stops what already runs.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { installLayout, type InstallLayout } from '../../../../src/installation/layout.js';
import { Backoff } from '../../../../src/lib/backoff.js';
import { LocalSupervisor, RESTART_BACKOFF, type ServiceDefinition } from '../../../../src/installation/runner/local-supervisor.js';
import { readSupervisorStatus, type LocalServiceName } from '../../../../src/installation/runner/supervisor-status.js';

/** What the stand-in services did, in order: "start database", "up database", "stop database". */
let events: string[];
let root: string;
let layout: InstallLayout;

function standIn(name: LocalServiceName, startMs: number, opts: { after?: LocalServiceName[]; fails?: boolean } = {}): ServiceDefinition {
  return {
    name,
    logFile: join(root, `${name}.log`),
    after: opts.after,
    async start() {
      events.push(`start ${name}`);
      await sleep(startMs);
      if (opts.fails) throw new Error(`${name} would not start`);
      events.push(`up ${name}`);
      let exit!: () => void;
      const exited = new Promise<void>((resolve) => (exit = resolve));
      return {
        exited,
        stop: async () => {
          events.push(`stop ${name}`);
          exit();
        },
      };
    },
  };
}

async function waitUntilReady(): Promise<void> {
  for (let i = 0; i < 200; i++) {
    if ((await readSupervisorStatus(layout.supervisorStatusFile))?.ready) return;
    await sleep(10);
  }
  throw new Error('the supervisor did not report ready');
}

beforeEach(async () => {
  events = [];
  root = await mkdtemp(join(tmpdir(), 'supervisor-'));
  layout = { ...installLayout(root), supervisorStatusFile: join(root, 'supervisor.json') };
});
afterEach(() => rm(root, { recursive: true, force: true }));

describe('LocalSupervisor start-up', () => {
  it('starts services that need none of each other side by side, and the others once those are up', async () => {
    const supervisor = new LocalSupervisor(layout, [
      standIn('database', 150),
      standIn('broker', 100),
      standIn('api', 10, { after: ['database', 'broker'] }),
      standIn('worker', 10, { after: ['api'] }),
    ]);
    const run = supervisor.run();
    await waitUntilReady();
    await supervisor.stop();
    expect(await run).toBe(0);
    // Each of the two starts before the other is up (which of them begins first is up to the
    // status file writes before each start).
    expect(events.slice(0, 4).sort()).toEqual(['start broker', 'start database', 'up broker', 'up database']);
    expect(events.indexOf('start broker')).toBeLessThan(events.indexOf('up database'));
    expect(events.indexOf('start database')).toBeLessThan(events.indexOf('up broker'));
    expect(events.slice(4, 8)).toEqual(['start api', 'up api', 'start worker', 'up worker']);
    // The stop goes in reverse order of the list.
    expect(events.slice(8)).toEqual(['stop worker', 'stop api', 'stop broker', 'stop database']);
  });

  it('fails the start-up when one first start fails: stops what runs, never starts what comes after', async () => {
    const supervisor = new LocalSupervisor(layout, [
      standIn('database', 100),
      standIn('broker', 20, { fails: true }),
      standIn('api', 10, { after: ['database', 'broker'] }),
    ]);
    expect(await supervisor.run()).toBe(1);
    const status = await readSupervisorStatus(layout.supervisorStatusFile);
    expect(status?.error).toBe('broker: broker would not start');
    expect(status?.ready).toBe(false);
    // The database, starting beside the broker, is stopped once it is up; the API never starts.
    expect([...events].sort()).toEqual(['start broker', 'start database', 'stop database', 'up database']);
    expect(events.indexOf('start broker')).toBeLessThan(events.indexOf('up database'));
    expect(events.indexOf('up database')).toBeLessThan(events.indexOf('stop database'));
    expect(status?.services.database?.state).toBe('stopped');
    expect(status?.services.api?.state).toBe('stopped');
  });
});

describe('LocalSupervisor restart waits', () => {
  /** The waits before each restart of a service that dies after running `livedMs` each time. */
  const waits = (livedMs: number, crashes: number): number[] => {
    const backoff = new Backoff(RESTART_BACKOFF);
    return Array.from({ length: crashes }, () => backoff.afterRun(livedMs));
  };

  it('brings a service that crashes again and again, 20 s apart, back after a second each time', () => {
    expect(waits(20_000, 6)).toEqual([1000, 1000, 1000, 1000, 1000, 1000]);
  });

  it('backs off a service that dies right after it came up, up to 30 s', () => {
    expect(waits(500, 7)).toEqual([1000, 2000, 4000, 8000, 16_000, 30_000, 30_000]);
  });
});
