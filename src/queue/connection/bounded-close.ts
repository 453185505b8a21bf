/**
 * Closing AMQP channels and connections without waiting on the broker for longer than a stop
 * may take. amqplib settles `close()` only when the broker confirms it (CloseOk): a broker that
 * stopped answering but left its sockets open (a paused node, a vanished host, a partition)
 * holds the close until the heartbeat gives up, a minute or more, and when the connection dies
 * meanwhile the promise is never settled at all. Here a close ends at the first of: the broker's
 * confirmation, the channel or connection closing any other way, or the time limit; a
 * connection still open at the limit has its socket destroyed, which closes it and every
 * channel on it at once (their pending operations fail instead of waiting).
 */
import type { EventEmitter } from 'node:events';
import type { Channel, ChannelModel } from 'amqplib';

/** How long a close waits for the broker's confirmation. */
export const BROKER_CLOSE_TIMEOUT_MS = 1_000;

interface Closable extends EventEmitter {
  close(): Promise<void>;
}

/** Resolves when `target` has closed, however, or false once `timeoutMs` passed first. */
function closeWithin(target: Closable, timeoutMs: number): Promise<boolean> {
  return new Promise((resolve) => {
    const done = (closed: boolean): void => {
      clearTimeout(timer);
      target.off('close', onClose);
      resolve(closed);
    };
    const onClose = (): void => done(true);
    const timer = setTimeout(() => done(false), timeoutMs);
    target.once('close', onClose);
    // A close that fails (the channel or connection was closed already) has nothing left to wait for.
    target.close().then(
      () => done(true),
      () => done(true),
    );
  });
}

/** Closes a channel; never takes longer than `timeoutMs`. */
export async function closeChannel(channel: Channel, timeoutMs = BROKER_CLOSE_TIMEOUT_MS): Promise<void> {
  await closeWithin(channel, timeoutMs);
}

/** The socket under an amqplib connection (not in its typings). */
function socketOf(connection: ChannelModel): { destroy(error?: Error): void } | undefined {
  return (connection.connection as unknown as { stream?: { destroy(error?: Error): void } }).stream;
}

/**
 * Closes a connection cleanly when the broker answers within `timeoutMs`, otherwise drops it:
 * either way it is closed when this resolves.
 */
export async function closeConnection(connection: ChannelModel, timeoutMs = BROKER_CLOSE_TIMEOUT_MS): Promise<void> {
  if (await closeWithin(connection, timeoutMs)) return;
  const socket = socketOf(connection);
  if (socket === undefined) return;
  let timer: NodeJS.Timeout | undefined;
  const closed = new Promise<void>((resolve) => {
    connection.once('close', () => resolve());
    // amqplib turns the socket's error into its own close at once; the limit is only a backstop.
    timer = setTimeout(resolve, timeoutMs);
  });
  socket.destroy(new Error(`the broker did not confirm the close within ${timeoutMs} ms`));
  await closed;
  clearTimeout(timer);
}
