/**
 * Starts a driver client afresh when its server monitoring stops.
 *
 * The driver learns that a database is back only from its monitor's checks, one at a time, each
 * bounded by connectTimeoutMS. One case escapes that bound (the driver's version 7, verified
 * against its source): when the engine closes a connection just as a check is sent on it, the
 * check writes to a socket that is already destroyed but has not yet said so; the write neither
 * fails nor completes, the check never ends, and the monitor, which waits for it, never checks
 * again. The server then stays "Unknown" for good after the engine's restart, and every
 * operation of the client fails its server selection until the process restarts. It happened
 * when an engine was killed under load, about once in ten kills.
 *
 * The watchdog sees it through the client's public monitoring events: a check that started and
 * neither succeeded nor failed within twice the connect timeout (and a margin) cannot be running
 * any more. It then closes the client and connects it again: a new topology with a new monitor.
 * The client object stays the same, so every collection handle keeps working; operations in the
 * moment of the restart fail as the database being unavailable (503), which they were doing
 * already.
 */
import type { MongoClient, ServerHeartbeatFailedEvent, ServerHeartbeatStartedEvent, ServerHeartbeatSucceededEvent } from 'mongodb';
import type { Logger } from '../log/logger.js';

/** Between attempts to connect a client started afresh while its engine is still down. */
const RECONNECT_PAUSE_MS = 2_000;

export interface MonitorWatchdogOptions {
  /** Which client this is, in the log. */
  name: string;
  logger: Logger;
  /** A check open longer than this is stuck (default: twice the connect timeout plus 5 s). */
  stuckAfterMs?: number;
}

export interface MonitorWatchdog {
  /** How many times the client was started afresh. */
  readonly restarts: number;
  /** Stops watching (before the client is closed for good: a restart in progress then gives up). */
  close(): void;
}

export function watchServerMonitoring(client: MongoClient, options: MonitorWatchdogOptions): MonitorWatchdog {
  const connectTimeoutMs = client.options.connectTimeoutMS > 0 ? client.options.connectTimeoutMS : 30_000;
  const stuckAfterMs = options.stuckAfterMs ?? 2 * connectTimeoutMs + 5_000;
  /** The start of each server's open check, by address. */
  const openChecks = new Map<string, number>();
  let restarting = false;
  let restarts = 0;

  const started = (e: ServerHeartbeatStartedEvent) => {
    // A streaming monitor opens its next check as the last one ends: the open check is the newest.
    openChecks.set(e.connectionId, Date.now());
  };
  const ended = (e: ServerHeartbeatSucceededEvent | ServerHeartbeatFailedEvent) => {
    openChecks.delete(e.connectionId);
  };
  client.on('serverHeartbeatStarted', started);
  client.on('serverHeartbeatSucceeded', ended);
  client.on('serverHeartbeatFailed', ended);

  let closed = false;
  const restart = async (address: string, openMs: number): Promise<void> => {
    restarting = true;
    restarts++;
    options.logger.error(
      { client: options.name, address, openMs },
      'database client: its server check never ended, so the driver stopped checking; starting the client afresh',
    );
    try {
      await client.close();
      openChecks.clear();
      // Until the engine answers, connecting fails (and operations fail as the database being
      // unavailable); tried again every few seconds, as the monitor would have.
      for (let attempt = 1; !closed; attempt++) {
        try {
          await client.connect();
          options.logger.info({ client: options.name, attempt }, 'database client started afresh');
          return;
        } catch (err) {
          if (attempt === 1) options.logger.warn({ err, client: options.name }, 'database client: connecting afresh failed; trying again');
          await new Promise((resolve) => setTimeout(resolve, RECONNECT_PAUSE_MS));
        }
      }
    } finally {
      restarting = false;
    }
  };

  const timer = setInterval(
    () => {
      if (restarting) return;
      const now = Date.now();
      for (const [address, since] of openChecks) {
        if (now - since > stuckAfterMs) {
          void restart(address, now - since);
          return;
        }
      }
    },
    Math.max(250, Math.floor(stuckAfterMs / 4)),
  );
  timer.unref();

  return {
    get restarts() {
      return restarts;
    },
    close() {
      closed = true;
      clearInterval(timer);
      client.off('serverHeartbeatStarted', started);
      client.off('serverHeartbeatSucceeded', ended);
      client.off('serverHeartbeatFailed', ended);
    },
  };
}
