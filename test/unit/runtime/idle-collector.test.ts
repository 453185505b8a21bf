import { once } from 'node:events';
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { IdleCollector, collectAfterBursts, collectAndTrim, majorCollection } from '../../../src/runtime/idle-collector.js';

const MB = 1024 * 1024;

/** A collector over a heap size the test sets, counting the collections it asks for. */
function fakeCollector(growth = 8 * MB, busyGrowth = 64 * MB, quietChecks = 1) {
  const state = { heap: 30 * MB, collections: 0, afterCollection: 30 * MB };
  let finish: () => void = () => undefined;
  const collector = new IdleCollector(
    () => state.heap,
    () => {
      state.collections += 1;
      return new Promise<void>((resolve) => {
        finish = () => {
          state.heap = state.afterCollection;
          resolve();
        };
      });
    },
    growth,
    busyGrowth,
    quietChecks,
  );
  return { collector, state, finish: () => finish() };
}

const settle = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe('IdleCollector', () => {
  it('collects once the process has been quiet for a whole check and the heap grew', async () => {
    const { collector, state, finish } = fakeCollector();
    collector.requestStarted();
    state.heap = 90 * MB;
    expect(collector.check()).toBe(false); // a request in flight
    collector.requestEnded();
    expect(collector.check()).toBe(false); // a request started since the last check
    expect(collector.check()).toBe(true); // quiet for a whole interval
    expect(state.collections).toBe(1);
    finish();
    await settle();
    expect(collector.check()).toBe(false); // the garbage is gone: nothing to do
    expect(state.collections).toBe(1);
  });

  it('waits for several quiet checks in a row, and a request in a pause starts the count again', () => {
    // A collection with no request alive throws away the optimised code of the request path:
    // traffic with pauses of a second or two must not pay that at every pause.
    const { collector, state } = fakeCollector(8 * MB, 64 * MB, 5);
    state.heap = 90 * MB;
    collector.requestStarted();
    collector.requestEnded();
    expect(collector.check()).toBe(false); // a request since the last check
    for (let i = 1; i < 5; i++) expect(collector.check()).toBe(false);
    collector.requestStarted();
    collector.requestEnded();
    expect(collector.check()).toBe(false); // the pause ended before it counted as quiet
    expect(state.collections).toBe(0);
    for (let i = 1; i < 5; i++) expect(collector.check()).toBe(false);
    expect(collector.check()).toBe(true);
    expect(state.collections).toBe(1);
  });

  it('leaves a heap that grew less than the threshold alone', () => {
    const { collector, state } = fakeCollector(8 * MB);
    state.heap += 7 * MB;
    collector.check();
    expect(collector.check()).toBe(false);
    expect(state.collections).toBe(0);
  });

  it('counts growth from what the last collection left, so a heap that stays larger is not collected again', async () => {
    const { collector, state, finish } = fakeCollector();
    state.heap = 120 * MB;
    state.afterCollection = 60 * MB; // live data the burst left (caches, compiled code)
    expect(collector.check()).toBe(true);
    finish();
    await settle();
    for (let i = 0; i < 5; i++) expect(collector.check()).toBe(false);
    state.heap = 69 * MB;
    expect(collector.check()).toBe(true);
  });

  it('collects again after the quiet that follows requests served while it collected', async () => {
    const { collector, state, finish } = fakeCollector();
    state.heap = 90 * MB;
    expect(collector.check()).toBe(true);
    // A burst arrives while the collection runs: its garbage is made after the marking began.
    collector.requestStarted();
    collector.requestEnded();
    state.afterCollection = 31 * MB;
    finish();
    await settle();
    expect(collector.check()).toBe(false); // the burst's end was since the last check
    expect(collector.check()).toBe(true); // quiet: the burst's garbage is collected too
    expect(state.collections).toBe(2);
  });

  it('collects while requests run only once the process has grown by the busy threshold, then again once quiet', async () => {
    const { collector, state, finish } = fakeCollector(8 * MB, 64 * MB);
    collector.requestStarted();
    state.heap += 63 * MB;
    expect(collector.check()).toBe(false); // busy, grown less than the busy threshold
    state.heap += 1 * MB;
    expect(collector.check()).toBe(true); // busy, grown by it
    expect(collector.check()).toBe(false); // one at a time
    state.afterCollection = 50 * MB;
    finish();
    await settle();
    state.heap += 1 * MB;
    expect(collector.check()).toBe(false); // still busy, growth counted from what the collection left
    collector.requestEnded();
    expect(collector.check()).toBe(false); // a request ended since the last check
    expect(collector.check()).toBe(true); // quiet: what the requests made meanwhile is collected, whatever the growth
    expect(state.collections).toBe(2);
  });

  it('never starts a second collection while one runs', () => {
    const { collector, state } = fakeCollector();
    state.heap = 90 * MB;
    expect(collector.check()).toBe(true);
    expect(collector.check()).toBe(false);
    expect(state.collections).toBe(1);
  });
});

describe('majorCollection', () => {
  it("frees what is unreachable with V8's own collector, without --expose-gc", async () => {
    expect(process.execArgv).not.toContain('--expose-gc');
    const collect = majorCollection();
    // An object old enough to live in the old generation: only a major collection frees it.
    let garbage: object[] | undefined = Array.from({ length: 1000 }, (_, i) => ({ i }));
    const ref = new WeakRef(garbage);
    await new Promise((resolve) => setTimeout(resolve, 10));
    garbage = undefined;
    // WeakRef targets survive until the end of the current job: collect in a later one.
    await new Promise((resolve) => setTimeout(resolve, 10));
    await collect();
    expect(garbage).toBeUndefined();
    expect(ref.deref()).toBeUndefined();
  });
});

describe('collectAndTrim', () => {
  it("gives malloc's free pages back once the collection has finished, not before", async () => {
    const steps: string[] = [];
    let finish: () => void = () => undefined;
    const collect = collectAndTrim(
      () =>
        new Promise<void>((resolve) => {
          steps.push('collect');
          finish = resolve;
        }),
      () => {
        steps.push('trim');
        return true;
      },
      20,
    );
    const done = collect();
    await settle();
    expect(steps).toEqual(['collect']);
    finish();
    await done;
    expect(steps).toEqual(['collect', 'trim']);
  });

  it('only collects where the C library has no trim', async () => {
    let collections = 0;
    await collectAndTrim(
      async () => {
        collections += 1;
      },
      undefined,
      0,
    )();
    expect(collections).toBe(1);
  });
});

describe('collectAfterBursts', () => {
  let server: Server | undefined;
  let stop: (() => void) | undefined;
  afterEach(async () => {
    stop?.();
    server?.close();
    if (server) await once(server, 'close');
  });

  it('collects the garbage of a burst of requests a quiet interval after it', async () => {
    let held: object[] | undefined;
    server = createServer((_req, res) => {
      // What a request leaves behind: unreachable as soon as the next one replaces it.
      held = Array.from({ length: 20_000 }, (_, i) => ({ i, text: `record ${i}` }));
      res.end('ok');
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    stop = collectAfterBursts(server, { intervalMs: 50, growthBytes: MB });
    const { port } = server.address() as AddressInfo;
    const get = (): Promise<void> =>
      new Promise((resolve, reject) => {
        request({ port, host: '127.0.0.1' }, (res) => res.resume().on('end', resolve))
          .on('error', reject)
          .end();
      });
    for (let i = 0; i < 20; i++) await get();
    const ref = new WeakRef(held as object[]);
    // eslint-disable-next-line no-useless-assignment -- drops the last strong reference
    held = undefined;
    // A few quiet intervals after the burst the collector has run (only a major collection
    // clears a WeakRef).
    const deadline = Date.now() + 5000;
    while (ref.deref() !== undefined && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
    expect(ref.deref()).toBeUndefined();
  });
});
