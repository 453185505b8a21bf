/**
 * Starts a driver client's server monitoring again when it stopped.
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
 * any more. It then starts that server's monitor again: closed (its timer stopped, its
 * connection destroyed) and connected, it checks at once and goes on checking; nothing else of
 * the client is touched. The driver gives no public way to do that, so the monitor is reached
 * through the client's topology; should a driver version not have it there, the whole client is
 * closed and connected again instead (a new topology, a new monitor; collection handles keep
 * working, and operations meanwhile fail as the database being unavailable, as they were). The
 * monitor comes first because closing a client waits for its cursors and sessions to end, and
 * an operation caught by the same fault never ends.
 */
import type { MongoClient, ServerHeartbeatFailedEvent, ServerHeartbeatStartedEvent, ServerHeartbeatSucceededEvent } from 'mongodb';
import type { Logger } from '../log/logger.js';

/** How long closing a client started afresh may take before it is connected again regardless. */
const CLOSE_WAIT_MS = 10_000;

/** The part of the driver's (internal) server monitor the watchdog uses. */
interface ServerMonitor {
  close(): void;
  connect(): void;
}

/** The monitor of the client's server at `address`, where the driver keeps it (internals). */
function monitorOf(client: MongoClient, address: string): ServerMonitor | undefined {
  const servers = (client as unknown as { topology?: { s?: { servers?: Map<string, { monitor?: Partial<ServerMonitor> | null }> } } })
    .topology?.s?.servers;
  const monitor = servers?.get(address)?.monitor;
  return typeof monitor?.close === 'function' && typeof monitor.connect === 'function' ? (monitor as ServerMonitor) : undefined;
}

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
  const restartClient = async (): Promise<void> => {
    // A close that waits for an operation caught by the same fault would never end.
    await Promise.race([client.close(), new Promise((resolve) => setTimeout(resolve, CLOSE_WAIT_MS))]);
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
  };

  const restart = async (address: string, openMs: number): Promise<void> => {
    restarting = true;
    restarts++;
    openChecks.delete(address);
    try {
      const monitor = monitorOf(client, address);
      if (monitor !== undefined) {
        options.logger.error(
          { client: options.name, address, openMs },
          "database client: its server check never ended, so the driver stopped checking; starting the server's monitoring again",
        );
        monitor.close();
        monitor.connect();
        return;
      }
      options.logger.error(
        { client: options.name, address, openMs },
        'database client: its server check never ended, so the driver stopped checking; starting the client afresh',
      );
      await restartClient();
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
