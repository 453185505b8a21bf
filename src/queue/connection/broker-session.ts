/**
 * One AMQP connection that heals itself: connects in the background, reconnects with
 * exponential backoff after the broker goes away, and says whether it is usable right now.
 * With several broker addresses (the nodes of a cluster) each attempt tries them in turn,
 * starting after the node that was lost, so a dead node costs one reconnect, not a backoff.
 * Users (publisher, control client, worker) open their channels on `connected` and treat
 * `require()` failing as "broker unavailable" (the API answers 503, the worker waits).
 */
import { EventEmitter } from 'node:events';
import type { ChannelModel } from 'amqplib';
import type { BrokerSettings } from '../../config/connections.js';
import { Backoff } from '../../lib/backoff.js';
import { QueueUnavailableError } from '../errors.js';
import { brokerAddresses, connectBroker } from './broker-connection.js';
import { closeConnection } from './bounded-close.js';

export interface BrokerSessionOptions {
  settings: BrokerSettings;
  /** First retry delay; doubles up to maxDelayMs. */
  initialDelayMs?: number;
  maxDelayMs?: number;
  /** Replaces connectBroker (e.g. to add client properties); called with one address at a time. */
  connect?: (settings: BrokerSettings) => Promise<ChannelModel>;
}

export interface BrokerSessionEvents {
  connected: [connection: ChannelModel];
  disconnected: [error: Error | undefined];
  /** A connection attempt failed; a retry is scheduled after delayMs. */
  retrying: [error: Error, delayMs: number];
}

export class BrokerSession extends EventEmitter<BrokerSessionEvents> {
  private current: ChannelModel | null = null;
  private closing = false;
  private started = false;
  private retryTimer: NodeJS.Timeout | null = null;
  /** Index (in brokerAddresses) of the node tried first on the next attempt. */
  private nextAddress = 0;
  private currentAddress: string | null = null;
  private readonly backoff: Backoff;
  private readonly connectFn: (settings: BrokerSettings) => Promise<ChannelModel>;

  constructor(private readonly options: BrokerSessionOptions) {
    super();
    // Jittered: every API process and worker loses the broker at the same instant.
    this.backoff = new Backoff({ initialMs: options.initialDelayMs ?? 500, maxMs: options.maxDelayMs ?? 15_000, jitter: 0.2 });
    this.connectFn = options.connect ?? connectBroker;
  }

  get connected(): boolean {
    return this.current !== null;
  }

  get connection(): ChannelModel | null {
    return this.current;
  }

  /** The address (without credentials) of the node connected to, or null. */
  get address(): string | null {
    return this.current === null ? null : this.currentAddress;
  }

  /** Starts connecting in the background; returns at once. */
  start(): this {
    if (!this.started) {
      this.started = true;
      void this.connectOnce();
    }
    return this;
  }

  /** The live connection, or a QueueUnavailableError when the broker is unreachable. */
  require(): ChannelModel {
    if (this.current === null) throw brokerUnavailable();
    return this.current;
  }

  /** Resolves with the connection once connected; rejects after timeoutMs (if given) or on close. */
  waitUntilConnected(timeoutMs?: number): Promise<ChannelModel> {
    this.start();
    if (this.current !== null) return Promise.resolve(this.current);
    return new Promise((resolve, reject) => {
      const timer = timeoutMs === undefined ? null : setTimeout(() => done(brokerUnavailable()), timeoutMs);
      const onConnected = (connection: ChannelModel): void => done(null, connection);
      const done = (error: Error | null, connection?: ChannelModel): void => {
        if (timer) clearTimeout(timer);
        this.off('connected', onConnected);
        if (error || connection === undefined) reject(error ?? brokerUnavailable());
        else resolve(connection);
      };
      this.on('connected', onConnected);
    });
  }

  async close(): Promise<void> {
    this.closing = true;
    if (this.retryTimer) clearTimeout(this.retryTimer);
    const connection = this.current;
    this.current = null;
    if (connection) await closeConnection(connection);
  }

  private async connectOnce(): Promise<void> {
    if (this.closing) return;
    let connection: ChannelModel;
    let index: number;
    try {
      ({ connection, index } = await this.connectToAnyNode());
    } catch (error) {
      this.scheduleRetry(error instanceof Error ? error : new Error(String(error)));
      return;
    }
    if (this.closing) {
      await connection.close().catch(() => undefined);
      return;
    }
    this.backoff.reset();
    this.current = connection;
    const addresses = brokerAddresses(this.options.settings);
    this.currentAddress = addresses[index] ?? null;
    // After losing this node, start with the next one: the lost one is likely still down.
    this.nextAddress = (index + 1) % addresses.length;
    // amqplib emits 'error' before 'close' on a connection failure; without a listener it throws.
    connection.on('error', () => undefined);
    connection.once('close', (error?: Error) => {
      if (this.current !== connection) return;
      this.current = null;
      this.emit('disconnected', error);
      if (!this.closing) this.scheduleRetry(error ?? new Error('connection closed'));
    });
    this.emit('connected', connection);
  }

  /** The first node, from `nextAddress` on and wrapping around, that accepts a connection. */
  private async connectToAnyNode(): Promise<{ connection: ChannelModel; index: number }> {
    const addresses = brokerAddresses(this.options.settings);
    const errors: Error[] = [];
    for (let i = 0; i < addresses.length; i++) {
      const index = (this.nextAddress + i) % addresses.length;
      const url = addresses[index] as string;
      try {
        const connection = await this.connectFn({ ...this.options.settings, url, alternateUrls: [] });
        return { connection, index };
      } catch (error) {
        errors.push(error instanceof Error ? error : new Error(String(error)));
        if (this.closing) break;
      }
    }
    if (errors.length === 1) throw errors[0];
    throw new AggregateError(errors, `no broker node reachable: ${errors.map((e) => e.message).join('; ')}`);
  }

  /** After losing a connection (the backoff was reset when it opened) the first retry waits the initial delay. */
  private scheduleRetry(error: Error): void {
    if (this.closing) return;
    const delay = this.backoff.next();
    this.emit('retrying', error, delay);
    this.retryTimer = setTimeout(() => {
      this.retryTimer = null;
      void this.connectOnce();
    }, delay);
  }
}

export function brokerUnavailable(): QueueUnavailableError {
  return new QueueUnavailableError('broker_unavailable', 'The task broker is not reachable; try again shortly.');
}
