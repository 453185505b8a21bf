/**
 * The worker's pidbox: consumes `<nodename>.celery.pidbox` (bound to the `celery.pidbox`
 * fanout), runs the commands addressed to this node and publishes kombu-format replies
 * (`{nodename: value}`, `ticket` header) to the requester's reply exchange.
 */
import type { Channel, ConsumeMessage } from 'amqplib';
import type { Logger } from 'pino';
import { declareReplyExchange, declareWorkerMailbox, REPLY_EXCHANGE } from '../../queue/protocol/entities.js';
import { controlPublishOptions, headerClock, isAddressedTo, parseControlRequest } from '../../queue/protocol/control-message.js';
import type { JsonValue } from '../../queue/protocol/json.js';
import { ControlCommandError, runControlCommand, type ControlTarget } from '../control-commands.js';

export class ControlMailbox {
  private readonly declaredReplyExchanges = new WeakMap<Channel, Set<string>>();

  constructor(
    private readonly target: ControlTarget,
    private readonly logger: Logger,
  ) {}

  /** Declares the mailbox on `channel` and starts consuming it. */
  async attach(channel: Channel): Promise<void> {
    const queue = await declareWorkerMailbox(channel, this.target.nodeName);
    await channel.consume(queue, (message) => void this.onMessage(channel, message), { noAck: true });
  }

  private async onMessage(channel: Channel, message: ConsumeMessage | null): Promise<void> {
    if (message === null) return;
    const request = parseControlRequest(message.content);
    if (request === null) {
      this.logger.warn('ignoring malformed remote-control message');
      return;
    }
    // Like kombu's Node, every request moves the clock past the sender's (Lamport).
    this.target.adjustClock(headerClock(message.properties.headers));
    if (!isAddressedTo(request, this.target.nodeName)) return;

    let value: JsonValue;
    try {
      value = runControlCommand(this.target, request.method, request.arguments);
    } catch (error) {
      value = { error: error instanceof ControlCommandError ? error.reply : `${(error as Error).name}('${(error as Error).message}')` };
      this.logger.warn({ method: request.method, err: error }, 'remote-control command failed');
    }
    this.logger.debug({ method: request.method }, 'remote-control command');
    if (request.reply_to === undefined) return;

    try {
      await this.ensureReplyExchange(channel, request.reply_to.exchange);
      const headers: Record<string, string | number> = { clock: this.target.clock() };
      if (request.ticket !== undefined) headers.ticket = request.ticket;
      channel.publish(
        request.reply_to.exchange,
        request.reply_to.routing_key,
        Buffer.from(JSON.stringify({ [this.target.nodeName]: value }), 'utf8'),
        controlPublishOptions(headers),
      );
    } catch (error) {
      this.logger.warn({ err: error }, 'could not send remote-control reply');
    }
  }

  /** Publishing to a missing exchange would close the channel, so declare it (as kombu does). */
  private async ensureReplyExchange(channel: Channel, exchange: string): Promise<void> {
    let declared = this.declaredReplyExchanges.get(channel);
    if (declared === undefined) {
      declared = new Set();
      this.declaredReplyExchanges.set(channel, declared);
    }
    if (declared.has(exchange)) return;
    if (exchange === REPLY_EXCHANGE) await declareReplyExchange(channel);
    else await channel.assertExchange(exchange, 'direct', { durable: false, autoDelete: false, internal: false });
    declared.add(exchange);
  }
}
