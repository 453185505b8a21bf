/**
 * `serve` with API_PROCESSES=2, run as an operator runs it: two worker processes share the port.
 * Under steady load one worker is killed with SIGKILL: the other keeps answering (only requests
 * the killed one had in hand fail), and the primary starts a new one, which answers too (shown
 * by killing the other original worker next, leaving the new one alone on the port).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requestOnNewConnection, spawnServe, type ServeLogLine, type ServeProcess } from '../../support/serve-process.js';
import { until } from '../../support/until.js';

const CLIENTS = 6;

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe('serve with API_PROCESSES=2', () => {
  let serve: ServeProcess;
  let child: ServeProcess['child'];
  let baseUrl = '';
  const lines = (): ServeLogLine[] => serve.lines();
  const output = (): string => serve.output();

  beforeAll(async () => {
    serve = await spawnServe({ API_PROCESSES: '2', METRICS_ENABLED: 'false' });
    child = serve.child;
    baseUrl = await serve.listening(90_000);
  });

  afterAll(() => serve?.kill());

  const readyPids = (worker: number): number[] =>
    lines()
      .filter((l) => l.msg === 'API process ready' && l.worker === worker)
      .map((l) => l.workerPid as number);

  it('keeps answering when a worker is killed, restarts it, and the new one answers', async () => {
    const [firstPid] = readyPids(0);
    const [secondPid] = readyPids(1);
    expect(firstPid, output()).toBeTypeOf('number');
    expect(secondPid, output()).toBeTypeOf('number');
    expect(firstPid).not.toBe(secondPid);

    // Steady load: CLIENTS loops, each with one request in flight at a time.
    type Outcome = { at: number; status: number | 'error' };
    const outcomes: Outcome[] = [];
    let running = true;
    const loops = Array.from({ length: CLIENTS }, async () => {
      while (running) {
        const status = await requestOnNewConnection(`${baseUrl}/api/health/`)
          .then((r) => r.status)
          .catch(() => 'error' as const);
        outcomes.push({ at: Date.now(), status });
      }
    });
    const answeredSince = (t: number) => outcomes.filter((o) => o.at > t && o.status === 200).length;
    try {
      await until(() => (answeredSince(0) >= 20 ? true : undefined), 30_000, 'load to start');

      const firstKill = Date.now();
      process.kill(firstPid as number, 'SIGKILL');
      // The other worker answers while the killed one is being replaced.
      await until(() => (answeredSince(firstKill + 200) >= 20 ? true : undefined), 30_000, 'the surviving worker to answer');
      const replacement = await until(() => readyPids(0)[1], 60_000, `a new worker 0; output:\n${output()}`);
      expect(replacement).not.toBe(firstPid);
      expect(alive(replacement)).toBe(true);

      // Kill the other original: only the replacement is left to answer.
      const secondKill = Date.now();
      process.kill(secondPid as number, 'SIGKILL');
      await until(() => (answeredSince(secondKill + 200) >= 20 ? true : undefined), 30_000, 'the replacement worker to answer');
      await until(() => readyPids(1)[1], 60_000, `a new worker 1; output:\n${output()}`);
    } finally {
      running = false;
      await Promise.all(loops);
    }

    const statuses = outcomes.map((o) => o.status);
    // Every answer is a success; the failures are requests cut off by a kill: at most one per
    // client (each has one request in flight) per kill.
    expect(
      statuses.filter((s) => s !== 200 && s !== 'error'),
      statuses.join(','),
    ).toEqual([]);
    expect(statuses.filter((s) => s === 'error').length).toBeLessThanOrEqual(2 * CLIENTS);
    expect(outcomes.length).toBeGreaterThan(60);
    expect(lines().filter((l) => l.msg === 'API process ended; restarting it').length).toBe(2);
  }, 240_000);

  it('shuts every process down on SIGTERM', async () => {
    const pids = [...readyPids(0), ...readyPids(1)].filter(alive);
    expect(pids.length).toBe(2);
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
    await until(() => (pids.some(alive) ? undefined : true), 30_000, 'the workers to end');
  });
});
