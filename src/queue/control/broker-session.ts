/**
 * One AMQP connection that heals itself: connects in the background, reconnects with
 * exponential backoff after the broker goes away, and says whether it is usable right now.
 * Users (publisher, control client, worker) open their channels on `connected` and treat
 * `require()` failing as "broker unavailable" (the API answers 503, the worker waits).
 */
import { EventEmitter } from 'node:events';
import type { ChannelModel } from 'amqplib';
import type { BrokerSettings } from '../../config/connections.js';
import { unavailable, type ApiError } from '../../errors.js';
import { connectBroker } from '../broker-connection.js';

export interface BrokerSessionOptions {
  settings: BrokerSettings;
  /** First retry delay; doubles up to maxDelayMs. */
  initialDelayMs?: number;
  maxDelayMs?: number;
  /** Replaces connectBroker (e.g. to add client properties). */
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
  private attempt = 0;
  private retryTimer: NodeJS.Timeout | null = null;
  private readonly initialDelayMs: number;
  private readonly maxDelayMs: number;
  private readonly connectFn: (settings: BrokerSettings) => Promise<ChannelModel>;

  constructor(private readonly options: BrokerSessionOptions) {
    super();
    this.initialDelayMs = options.initialDelayMs ?? 500;
    this.maxDelayMs = options.maxDelayMs ?? 15_000;
    this.connectFn = options.connect ?? connectBroker;
  }

  get connected(): boolean {
    return this.current !== null;
  }

  get connection(): ChannelModel | null {
    return this.current;
  }

  /** Starts connecting in the background; returns at once. */
  start(): this {
    if (!this.started) {
      this.started = true;
      void this.connectOnce();
    }
    return this;
  }

  /** The live connection, or a 503 ApiError when the broker is unreachable. */
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
    if (connection) await connection.close().catch(() => undefined);
  }

  private async connectOnce(): Promise<void> {
    if (this.closing) return;
    let connection: ChannelModel;
    try {
      connection = await this.connectFn(this.options.settings);
    } catch (error) {
      this.scheduleRetry(error instanceof Error ? error : new Error(String(error)));
      return;
    }
    if (this.closing) {
      await connection.close().catch(() => undefined);
      return;
    }
    this.attempt = 0;
    this.current = connection;
    // amqplib emits 'error' before 'close' on a connection failure; without a listener it throws.
    connection.on('error', () => undefined);
    connection.once('close', (error?: Error) => {
      if (this.current !== connection) return;
      this.current = null;
      this.emit('disconnected', error);
      if (!this.closing) this.scheduleRetry(error ?? new Error('connection closed'), true);
    });
    this.emit('connected', connection);
  }

  private scheduleRetry(error: Error, immediate = false): void {
    if (this.closing) return;
    const base = immediate ? this.initialDelayMs : Math.min(this.maxDelayMs, this.initialDelayMs * 2 ** this.attempt);
    const delay = Math.round(base * (0.8 + Math.random() * 0.4));
    this.attempt += 1;
    this.emit('retrying', error, delay);
    this.retryTimer = setTimeout(() => {
      this.retryTimer = null;
      void this.connectOnce();
    }, delay);
  }
}

export function brokerUnavailable(): ApiError {
  return unavailable('The task broker is not reachable; try again shortly.', 'broker_unavailable');
}
