/**
 * Gives the memory of a burst of requests back once the burst is over.
 *
 * Under load V8 grows the old generation to hold what the requests promote (query results,
 * parsed bodies, socket buffers) and collects it only when the next allocation needs the room:
 * after the load stops nothing allocates, so tens of MB of garbage stay resident until V8's
 * memory reducer notices the quiet, which can take from seconds to minutes. Here the API asks
 * for one compacting major collection itself as soon as it has been quiet for a few check
 * intervals (no request started, ended or in flight) and its resident memory is at least
 * `growthBytes` more than right after the previous collection. The collection runs as a task of
 * its own between the event loop's others (V8's asynchronous `gc`): a request that arrives
 * meanwhile waits for it, tens of ms at most.
 *
 * Quiet means IDLE_QUIET_CHECKS checks in a row (5 s), not one. A collection while no request is
 * alive also frees every object the request path's optimised code was specialised on (V8 then
 * throws that code away, "weak objects"), so the next burst's requests are optimised all over
 * again: after a collection one second into a pause, the next 2,000 reads by id took 0.77-0.93 ms
 * of the API's CPU each against 0.42-0.52 ms. Traffic with pauses of a few seconds (a polling
 * page, a script between batches) paid that at every pause; it now pays it after a real lull.
 *
 * A quiet process triggers it once per burst, not once per interval: the baseline moves to what
 * is left after each collection. A process that stays busy triggers it only once it has grown by
 * `busyGrowthBytes`: V8 collects on its own under allocation, but lets the old generation and the
 * buffers it has not yet collected (each export's driver replies, each upload's body) reach
 * hundreds of MB before it does, and a run of requests with no quiet spell between them (a
 * session going from page to export to upload) kept all of that resident.
 */
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { setTimeout as delay } from 'node:timers/promises';
import { loadMallocTrim, type MallocTrim } from './malloc-trim.js';

/** How often the process looks for a finished burst. */
export const IDLE_CHECK_INTERVAL_MS = 1000;
/** Checks in a row with no request started, ended or in flight before the process counts as quiet. */
const IDLE_QUIET_CHECKS = 5;
/** Growth of the resident memory since the last collection that is worth one once quiet. */
export const IDLE_COLLECT_GROWTH_BYTES = 8 * 1024 * 1024;
/**
 * Growth of the resident memory since the last collection that is worth one while requests run:
 * a major collection of the API's heap (40-60 MB live) takes tens of ms of CPU, spent at most
 * once per this much growth.
 */
export const BUSY_COLLECT_GROWTH_BYTES = 64 * 1024 * 1024;

/**
 * How long after a collection malloc's free pages are given back: V8 frees the native memory of
 * the collected buffers (socket reads, TLS records) while it sweeps, which goes on after the
 * collection itself has finished.
 */
export const TRIM_AFTER_COLLECTION_MS = 500;

/** What a check reads: the bytes a collection and trim could give part of back. */
export type HeapMeasure = () => number;
/** Starts a major collection; resolves when it is done. */
export type MajorCollection = () => Promise<void>;

export class IdleCollector {
  private active = 0;
  /** A request started or ended since the previous check. */
  private stirred = false;
  /** Checks in a row that found no request. */
  private quietChecks = 0;
  private collecting = false;
  /** The measure right after the last collection (or at start): growth is counted from it. */
  private baseline: number;
  /**
   * A request was served while a collection ran: its garbage was made after that collection
   * began marking and may outlive it, though the baseline taken after it counts it as live. The
   * next quiet check collects again, whatever the growth.
   */
  private owed = false;

  constructor(
    private readonly measure: HeapMeasure,
    private readonly collect: MajorCollection,
    private readonly growthBytes = IDLE_COLLECT_GROWTH_BYTES,
    private readonly busyGrowthBytes = BUSY_COLLECT_GROWTH_BYTES,
    private readonly quietChecksNeeded = IDLE_QUIET_CHECKS,
  ) {
    this.baseline = measure();
  }

  requestStarted(): void {
    this.active += 1;
    this.stirred = true;
    if (this.collecting) this.owed = true;
  }

  requestEnded(): void {
    this.active -= 1;
    this.stirred = true;
  }

  /**
   * One check: starts a collection when no request was in flight, started or ended through
   * `quietChecksNeeded` checks in a row and the process has grown enough, or when it has grown by
   * `busyGrowthBytes` whatever runs. Returns whether it started one.
   */
  check(): boolean {
    this.quietChecks = this.active === 0 && !this.stirred ? this.quietChecks + 1 : 0;
    const quiet = this.quietChecks >= this.quietChecksNeeded;
    this.stirred = false;
    if (this.collecting) return false;
    const growth = this.measure() - this.baseline;
    if (quiet ? !this.owed && growth < this.growthBytes : growth < this.busyGrowthBytes) return false;
    // Requests run now are served while this collection marks: their garbage may outlive it.
    this.owed = !quiet;
    this.collecting = true;
    void this.collect()
      .catch(() => undefined)
      .finally(() => {
        this.collecting = false;
        this.baseline = this.measure();
      });
    return true;
  }
}

/**
 * The process's resident memory. Not the heap's own figures: V8 collects a burst's garbage on its
 * own while the burst runs, so right after it both the used heap and the buffers outside it can
 * be back near their baseline while the pages stay resident: V8's committed pages until a
 * compaction gives them back, and malloc's free space (the collected buffers' memory) until it is
 * trimmed. Measured so, a burst whose garbage V8 had already collected was never followed by a
 * trim.
 */
export function residentBytes(): number {
  return process.memoryUsage.rss();
}

type GcFunction = (options?: { type: 'major' | 'minor'; execution: 'sync' | 'async' }) => Promise<void> | undefined;

/**
 * A major collection that also compacts: V8's `gc` function, obtained without starting Node
 * with --expose-gc (a flag an operator's own command line may not carry): the flag is turned on
 * at run time, and a fresh context is created to be given the function (a process started with
 * --expose-gc already has it).
 *
 * A plain major collection frees the garbage but leaves most of the pages it was on in place,
 * each with a few live objects (measured after a burst: 24 MB in use on 55 MB of old space);
 * compacting moves those objects together so that the pages go back to the system. V8 decides
 * per collection whether to compact, so the flag is set for this collection only.
 */
export function majorCollection(): MajorCollection {
  let gc = (globalThis as { gc?: GcFunction }).gc;
  if (typeof gc !== 'function') {
    setFlagsFromString('--expose-gc');
    gc = runInNewContext('gc') as GcFunction;
  }
  const run = gc;
  return async () => {
    setFlagsFromString('--compact-on-every-full-gc');
    try {
      // Asynchronous: run as a task of its own, with none of this code on the stack.
      await run({ type: 'major', execution: 'async' });
    } finally {
      setFlagsFromString('--no-compact-on-every-full-gc');
    }
  };
}

/**
 * The whole clean-up after a burst: the compacting collection of V8's heap, then, once the
 * collected buffers' native memory has been freed, malloc's free pages given back (`trim`,
 * where the C library has one). Without the trim the process kept about 10 MB of malloc's
 * free space after each burst (1.11-1.20 of its idle RSS, against 1.05 with it).
 */
export function collectAndTrim(
  collect: MajorCollection,
  trim: MallocTrim | undefined,
  trimDelayMs = TRIM_AFTER_COLLECTION_MS,
): MajorCollection {
  return async () => {
    await collect();
    if (trim === undefined) return;
    await delay(trimDelayMs, undefined, { ref: false });
    trim();
  };
}

/**
 * Watches `server`'s requests and checks every `intervalMs` (the timer never keeps the process
 * alive). Returns the function that stops it.
 */
export function collectAfterBursts(
  server: Server,
  {
    intervalMs = IDLE_CHECK_INTERVAL_MS,
    growthBytes = IDLE_COLLECT_GROWTH_BYTES,
    busyGrowthBytes = BUSY_COLLECT_GROWTH_BYTES,
    quietChecks = IDLE_QUIET_CHECKS,
  }: { intervalMs?: number; growthBytes?: number; busyGrowthBytes?: number; quietChecks?: number } = {},
): () => void {
  const collector = new IdleCollector(
    residentBytes,
    collectAndTrim(majorCollection(), loadMallocTrim()),
    growthBytes,
    busyGrowthBytes,
    quietChecks,
  );
  const ended = (): void => collector.requestEnded();
  const onRequest = (_req: IncomingMessage, res: ServerResponse): void => {
    collector.requestStarted();
    res.once('close', ended);
  };
  server.on('request', onRequest);
  const timer = setInterval(() => collector.check(), intervalMs);
  timer.unref();
  return () => {
    clearInterval(timer);
    server.off('request', onRequest);
  };
}
