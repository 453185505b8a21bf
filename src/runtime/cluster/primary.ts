/**
 * API_PROCESSES > 1: this process becomes the primary of a node:cluster. It serves no requests
 * itself; it forks the API worker processes, which share the listening socket (each accepts
 * connections from it; the kernel hands every new connection to one of them), and keeps that
 * many running:
 *
 *   - Start-up: the first worker starts alone, so the one-time start-up work (index builds, the
 *     token-key and grants migrations, the worker-role reconcile) runs once, unraced; the others
 *     start once it listens and find nothing left to do. (That work is also safe when several
 *     processes run it at once, as API replicas in containers do.) A worker that ends before
 *     every worker has listened once ends the whole service with status 1, as a single process
 *     failing to start would, so the runtime's own restart policy and logs apply.
 *   - Afterwards a worker that ends, for whatever reason, is started again on its own after a
 *     backoff (lib/backoff.ts); the others keep answering meanwhile. Only the requests the
 *     ended worker was handling fail.
 *   - A question about all of them (a metrics scrape, the admin's Operations data), whichever
 *     worker gets it, is answered from all of them: that worker asks here, the primary puts the
 *     question to every ready worker and sends back their answers (gatherer.ts, peer.ts).
 *   - SIGTERM or SIGINT: each worker gets SIGTERM and shuts down gracefully (stops accepting,
 *     finishes its requests); after SHUTDOWN_GRACE_MS the stragglers are killed.
 */
import cluster, { type Worker } from 'node:cluster';
import type { Logger } from '../../log/logger.js';
import { apiExecArgv, apiProcessEnv } from '../../config/api-memory.js';
import { isGatherRequest, isPeerAnswer } from './gather-messages.js';
import { ProcessGatherer } from './gatherer.js';
import { isWorkerReady } from './messages.js';
import { Backoff, type BackoffOptions } from '../../lib/backoff.js';

/**
 * Restarting a worker that ended: one that dies once after running a while comes back almost at
 * once; one that keeps dying soon after starting (the database refusing it, a bad deployment)
 * waits twice as long each time.
 */
const RESTART_BACKOFF: BackoffOptions = { initialMs: 500, maxMs: 30_000, stableMs: 30_000 };

/** Longer than a worker's own forced close (10 s) plus closing its clients. */
const SHUTDOWN_GRACE_MS = 20_000;

export interface PrimaryOptions {
  processes: number;
  /** The workers' environment: the settings this process was started with (env file included). */
  env: Record<string, string | undefined>;
  logger: Logger;
}

interface Slot {
  index: number;
  worker: Worker | undefined;
  /** Listening: it answers the questions of a gather. */
  ready: boolean;
  startedAt: number;
  backoff: Backoff;
  restartTimer: NodeJS.Timeout | undefined;
}

export async function runApiPrimary(options: PrimaryOptions): Promise<void> {
  const { processes, logger } = options;
  const given = Object.fromEntries(Object.entries(options.env).filter((e): e is [string, string] => e[1] !== undefined));
  const env = { ...given, ...apiProcessEnv(given) };
  // Every worker accepts connections on the shared socket itself, unless the operator chose
  // otherwise (NODE_CLUSTER_SCHED_POLICY=rr). With round robin the primary accepts and passes
  // each connection on: one more hop, and a connection being passed to a worker as it dies is
  // left open by the primary until the client gives up, instead of failing at once.
  if (process.env.NODE_CLUSTER_SCHED_POLICY === undefined) cluster.schedulingPolicy = cluster.SCHED_NONE;
  // Workers run `serve` whatever this process was started as (`dev` starts the services first),
  // with the API's memory settings however the primary itself was started.
  cluster.setupPrimary({ args: ['serve'], execArgv: apiExecArgv(process.execArgv, process.env.NODE_OPTIONS) });
  const slots: Slot[] = Array.from({ length: processes }, (_, index) => ({
    index,
    worker: undefined,
    ready: false,
    startedAt: 0,
    backoff: new Backoff(RESTART_BACKOFF),
    restartTimer: undefined,
  }));
  let stopping = false;
  let started = false;
  let failStart: (err: Error) => void = () => undefined;
  const gatherer = new ProcessGatherer(() =>
    slots.flatMap((s) => (s.ready && s.worker !== undefined && s.worker.isConnected() ? [s.worker] : [])),
  );

  const fork = (slot: Slot): Promise<string> => {
    const worker = cluster.fork(env);
    slot.worker = worker;
    slot.ready = false;
    slot.startedAt = Date.now();
    return new Promise<string>((resolve) => {
      worker.on('message', (message: unknown) => {
        if (isGatherRequest(message)) return gatherer.serve(worker, message);
        if (isPeerAnswer(message)) return gatherer.answered(worker, message);
        if (!isWorkerReady(message)) return;
        slot.ready = true;
        logger.info({ worker: slot.index, workerPid: worker.process.pid }, 'API process ready');
        resolve(message.url);
      });
    });
  };

  cluster.on('exit', (worker, code, signal) => {
    const slot = slots.find((s) => s.worker === worker);
    if (slot === undefined) return;
    slot.worker = undefined;
    slot.ready = false;
    gatherer.gone(worker);
    if (stopping) return;
    const lived = Date.now() - slot.startedAt;
    if (!started) {
      failStart(new Error(`API process ${slot.index} (pid ${worker.process.pid}) ended during start-up (code ${code}, signal ${signal})`));
      return;
    }
    const delay = slot.backoff.afterRun(lived);
    logger.error(
      { worker: slot.index, workerPid: worker.process.pid, code, signal, livedMs: lived, restartInMs: delay },
      'API process ended; restarting it',
    );
    slot.restartTimer = setTimeout(() => {
      slot.restartTimer = undefined;
      if (!stopping) void fork(slot);
    }, delay);
  });

  const stop = async (reason: string): Promise<void> => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal: reason }, 'shutting down the API processes');
    const live: Worker[] = [];
    for (const slot of slots) {
      clearTimeout(slot.restartTimer);
      // Closing: a gather meanwhile asks nobody rather than waiting for closing processes.
      slot.ready = false;
      if (slot.worker !== undefined && !slot.worker.isDead()) live.push(slot.worker);
    }
    const gone = Promise.all(live.map((w) => new Promise<void>((resolve) => (w.isDead() ? resolve() : w.once('exit', () => resolve())))));
    for (const worker of live) worker.process.kill('SIGTERM');
    const forced = setTimeout(() => {
      for (const worker of live) if (!worker.isDead()) worker.process.kill('SIGKILL');
    }, SHUTDOWN_GRACE_MS);
    await gone;
    clearTimeout(forced);
  };
  const onSignal = (signal: NodeJS.Signals): void => {
    void stop(signal).then(() => process.exit(0));
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);

  const startFailed = new Promise<never>((_, reject) => {
    failStart = reject;
  });
  try {
    const [first, ...rest] = slots as [Slot, ...Slot[]];
    const url = await Promise.race([fork(first), startFailed]);
    await Promise.race([Promise.all(rest.map((slot) => fork(slot))), startFailed]);
    started = true;
    logger.info({ url, processes }, 'API server listening');
  } catch (err) {
    logger.error({ err }, 'API start-up failed');
    await stop('start-up failure');
    process.exit(1);
  }
}
