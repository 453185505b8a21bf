/**
 * Celery remote control from TypeScript (what `celery inspect`/`celery control` do): broadcast a
 * command on `celery.pidbox` and gather `{nodename: reply}` from our own exclusive reply queue,
 * bound to `reply.celery.pidbox` with a unique routing key, matching replies by `ticket`.
 */
import { randomUUID } from 'node:crypto';
import type { ChannelModel, ConfirmChannel, ConsumeMessage } from 'amqplib';
import type { JsonObject, JsonValue } from '../protocol/json.js';
import { PIDBOX_EXCHANGE, declarePidboxExchange, declareReplyQueue } from '../protocol/entities.js';
import {
  buildControlRequest,
  controlPublishOptions,
  headerClock,
  parseControlReply,
  requestHeaders,
  type ControlRequestInput,
} from '../protocol/control-message.js';
import { parseRegisteredTask, type ParsedRegisteredTask } from '../protocol/registered-tasks.js';
import { parseTaskInfoReply, TASK_INFO_COMMAND, type TaskInfoReply } from '../protocol/task-info.js';
import { brokerUnavailable, type BrokerSession } from '../connection/broker-session.js';
import { closeChannel } from '../connection/bounded-close.js';

export interface BroadcastOptions {
  /** How long to gather replies (Celery's CLI default is 1 s). */
  timeoutMs?: number;
  /** Stop after this many replies; defaults to the number of destinations when given. */
  limit?: number;
  /** Node names to address; all workers when absent. */
  destination?: string[];
  pattern?: string;
  matcher?: 'glob' | 'pcre';
}

export type NodeReplies<T = JsonValue> = Record<string, T>;

interface Collector {
  replies: NodeReplies;
  limit: number | undefined;
  /** The channel whose reply queue gathers the replies. */
  channel: ConfirmChannel;
  finish: () => void;
  /** The request or its replies were lost (channel closed, publish refused): no answer at all. */
  fail: () => void;
}

interface ReplyChannel {
  connection: ChannelModel;
  ready: Promise<{ channel: ConfirmChannel; routingKey: string }>;
}

export class ControlClient {
  private readonly session: BrokerSession;
  private channel: ReplyChannel | null = null;
  private readonly collectors = new Map<string, Collector>();
  /** Lamport clock, as kombu keeps one per mailbox. */
  private clock = 0;

  constructor(options: { session: BrokerSession }) {
    this.session = options.session;
  }

  /** Sends `method` and gathers replies until the timeout or the limit. */
  async broadcast(method: string, args: JsonObject = {}, options: BroadcastOptions = {}): Promise<NodeReplies> {
    const { channel, routingKey } = await this.replyChannel();
    const ticket = randomUUID();
    const timeoutMs = options.timeoutMs ?? 1_000;
    const limit = options.limit ?? (options.destination?.length ? options.destination.length : undefined);
    const request: ControlRequestInput = {
      method,
      arguments: args,
      destination: options.destination ?? null,
      pattern: options.pattern ?? null,
      matcher: options.pattern ? (options.matcher ?? 'glob') : null,
      reply: { ticket, routingKey },
    };

    // Replies gathered on a reply queue that went away (its node died) are no answer: reporting
    // them, or none, would tell the caller that workers which are alive do not exist.
    return new Promise<NodeReplies>((resolve, reject) => {
      const collector: Collector = {
        replies: {},
        limit,
        channel,
        finish: () => {
          clearTimeout(timer);
          this.collectors.delete(ticket);
          resolve(collector.replies);
        },
        fail: () => {
          clearTimeout(timer);
          this.collectors.delete(ticket);
          reject(brokerUnavailable());
        },
      };
      const timer = setTimeout(collector.finish, timeoutMs);
      this.collectors.set(ticket, collector);
      try {
        this.publish(channel, request, timeoutMs).catch(() => collector.fail());
      } catch {
        collector.fail();
      }
    });
  }

  /**
   * Fire-and-forget command (no ticket, no reply_to: workers do not answer). Resolves once the
   * broker has the message, so a caller that exits right after does not lose it.
   */
  async cast(
    method: string,
    args: JsonObject = {},
    options: Pick<BroadcastOptions, 'destination' | 'pattern' | 'matcher'> = {},
  ): Promise<void> {
    const { channel } = await this.replyChannel();
    try {
      await this.publish(
        channel,
        {
          method,
          arguments: args,
          destination: options.destination ?? null,
          pattern: options.pattern ?? null,
          matcher: options.pattern ? (options.matcher ?? 'glob') : null,
        },
        0,
      );
    } catch {
      throw brokerUnavailable();
    }
  }

  ping(options?: BroadcastOptions): Promise<NodeReplies> {
    return this.broadcast('ping', {}, options);
  }

  /** Registered task names per node, with the requested attributes (e.g. `__doc__`) parsed out. */
  async registered(taskinfoitems: string[] = ['__doc__'], options?: BroadcastOptions): Promise<NodeReplies<ParsedRegisteredTask[]>> {
    const replies = await this.broadcast('registered', { taskinfoitems }, options);
    const out: NodeReplies<ParsedRegisteredTask[]> = {};
    for (const [node, value] of Object.entries(replies)) {
      if (!Array.isArray(value)) continue; // an {"error": ...} reply
      out[node] = value.filter((line): line is string => typeof line === 'string').map((line) => parseRegisteredTask(line, taskinfoitems));
    }
    return out;
  }

  /** Each node's task docs and signatures (`cybercom_task_info`), or its refusal when it lacks the command. */
  async taskInfo(options?: BroadcastOptions): Promise<NodeReplies<TaskInfoReply>> {
    const replies = await this.broadcast(TASK_INFO_COMMAND, {}, options);
    const out: NodeReplies<TaskInfoReply> = {};
    for (const [node, value] of Object.entries(replies)) out[node] = parseTaskInfoReply(value);
    return out;
  }

  /** Queues each node consumes from (kombu `Queue.as_dict` objects). */
  async activeQueues(options?: BroadcastOptions): Promise<NodeReplies<JsonObject[]>> {
    const replies = await this.broadcast('active_queues', {}, options);
    const out: NodeReplies<JsonObject[]> = {};
    for (const [node, value] of Object.entries(replies)) {
      if (Array.isArray(value)) out[node] = value.filter((q): q is JsonObject => typeof q === 'object' && q !== null && !Array.isArray(q));
    }
    return out;
  }

  /**
   * Revokes task ids on every worker. Without `reply` it is a fire-and-forget broadcast like
   * Celery's `revoke`; with `reply` the node replies are gathered.
   */
  async revoke(
    taskId: string | string[],
    options: { terminate?: boolean; signal?: string; reply?: boolean } & BroadcastOptions = {},
  ): Promise<NodeReplies> {
    const args: JsonObject = { task_id: taskId, terminate: options.terminate ?? false, signal: options.signal ?? 'SIGTERM' };
    if (options.reply) return this.broadcast('revoke', args, options);
    await this.cast('revoke', args, options);
    return {};
  }

  async close(): Promise<void> {
    for (const collector of [...this.collectors.values()]) collector.finish();
    const slot = this.channel;
    this.channel = null;
    const ready = await slot?.ready.catch(() => null);
    if (ready) await closeChannel(ready.channel);
  }

  /** Publishes a request; the promise settles with the broker's confirm. */
  private publish(channel: ConfirmChannel, input: ControlRequestInput, timeoutMs: number): Promise<void> {
    this.clock += 1;
    const body = Buffer.from(JSON.stringify(buildControlRequest(input)), 'utf8');
    return new Promise((resolve, reject) => {
      channel.publish(PIDBOX_EXCHANGE, '', body, controlPublishOptions(requestHeaders(this.clock, timeoutMs)), (error: unknown) =>
        error ? reject(brokerUnavailable()) : resolve(),
      );
    });
  }

  private async replyChannel(): Promise<{ channel: ConfirmChannel; routingKey: string }> {
    const connection = this.session.require();
    if (this.channel?.connection === connection) return this.channel.ready.catch(() => Promise.reject(brokerUnavailable()));
    const slot: ReplyChannel = { connection, ready: this.openReplyChannel(connection) };
    slot.ready.catch(() => {
      if (this.channel === slot) this.channel = null;
    });
    this.channel = slot;
    return slot.ready.catch(() => Promise.reject(brokerUnavailable()));
  }

  private async openReplyChannel(connection: ChannelModel): Promise<{ channel: ConfirmChannel; routingKey: string }> {
    const channel = await connection.createConfirmChannel();
    channel.on('error', () => undefined);
    channel.once('close', () => {
      if (this.channel?.connection === connection) this.channel = null;
      for (const collector of [...this.collectors.values()]) if (collector.channel === channel) collector.fail();
    });
    // Any unique string works as the routing key; kombu uses a UUID ("oid").
    const routingKey = randomUUID();
    await declarePidboxExchange(channel);
    const queue = await declareReplyQueue(channel, routingKey);
    await channel.consume(queue, (message) => this.onReply(message), { noAck: true });
    return { channel, routingKey };
  }

  private onReply(message: ConsumeMessage | null): void {
    if (message === null) return;
    const reply = parseControlReply(message);
    if (reply === null || reply.ticket === null) return;
    // kombu's LamportClock.adjust: past every clock seen.
    const peerClock = headerClock(message.properties.headers);
    if (peerClock > 0) this.clock = Math.max(this.clock, peerClock) + 1;
    const collector = this.collectors.get(reply.ticket);
    if (collector === undefined) return;
    collector.replies[reply.nodeName] = reply.value;
    if (collector.limit !== undefined && Object.keys(collector.replies).length >= collector.limit) collector.finish();
  }
}
