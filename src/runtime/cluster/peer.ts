/**
 * An API process's side of a gather under the cluster: answers the primary's questions with the
 * handler registered for their topic, and asks the primary for every process's answer to a
 * topic, bounded by a timeout. One per process, on the IPC channel to the primary.
 */
import { GATHER_REQUEST, PEER_ANSWER, isGatherResult, isPeerQuestion, type GatherRequest, type PeerAnswer } from './gather-messages.js';

export const ASK_TIMEOUT_MS = 5_000;

/** The IPC channel to the primary: `process` in a cluster worker. */
export interface PrimaryChannel {
  send?: (
    message: GatherRequest | PeerAnswer,
    sendHandle: undefined,
    options: undefined,
    callback: (error: Error | null) => void,
  ) => unknown;
  on(event: 'message', listener: (message: unknown) => void): unknown;
  off(event: 'message', listener: (message: unknown) => void): unknown;
}

/** Why a gather has no result: the caller turns it into its own error for the client. */
export class GatherFailed extends Error {
  constructor(reason: string) {
    super(reason);
    this.name = 'GatherFailed';
  }
}

/** This process's answer to a topic; must be something IPC can carry (JSON-like). */
export type TopicHandler = () => Promise<unknown>;

export class ClusterPeer {
  private nextId = 0;
  private readonly handlers = new Map<string, TopicHandler>();
  private readonly pending = new Map<number, { resolve: (answers: unknown[]) => void; reject: (err: Error) => void }>();
  private readonly onMessage = (message: unknown): void => {
    if (isPeerQuestion(message)) {
      const handler = this.handlers.get(message.topic);
      const answer = handler === undefined ? Promise.reject(new Error(`nothing answers "${message.topic}"`)) : handler();
      answer.then(
        (value) => this.send({ type: PEER_ANSWER, id: message.id, value }),
        (err: unknown) => this.send({ type: PEER_ANSWER, id: message.id, error: err instanceof Error ? err.message : String(err) }),
      );
    } else if (isGatherResult(message)) {
      const waiter = this.pending.get(message.id);
      if (waiter === undefined) return;
      if (message.answers !== undefined) waiter.resolve(message.answers);
      else waiter.reject(new GatherFailed(message.error ?? 'no answer'));
    }
  };

  constructor(
    private readonly channel: PrimaryChannel = process,
    private readonly timeoutMs = ASK_TIMEOUT_MS,
  ) {}

  start(): this {
    this.channel.on('message', this.onMessage);
    return this;
  }

  close(): void {
    this.channel.off('message', this.onMessage);
    for (const waiter of this.pending.values()) waiter.reject(new GatherFailed('the process is shutting down'));
    this.pending.clear();
  }

  /** Answers the primary's questions about `topic` with `handler` (one handler per topic). */
  answer(topic: string, handler: TopicHandler): void {
    this.handlers.set(topic, handler);
  }

  /** Every ready API process's answer to `topic` (this one's included); GatherFailed if they do not come. */
  gather(topic: string): Promise<unknown[]> {
    const id = this.nextId++;
    return new Promise<unknown[]>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        reject(new GatherFailed(`no answer from the primary within ${this.timeoutMs} ms`));
      }, this.timeoutMs);
      const settle =
        <T>(fn: (value: T) => void) =>
        (value: T): void => {
          clearTimeout(timer);
          this.pending.delete(id);
          fn(value);
        };
      this.pending.set(id, { resolve: settle(resolve), reject: settle(reject) });
      this.send({ type: GATHER_REQUEST, id, topic });
    });
  }

  private send(message: GatherRequest | PeerAnswer): void {
    // With a callback, a channel that is gone (the primary is ending this process) reports to it
    // instead of raising an 'error' event nobody handles; the asker then times out.
    this.channel.send?.(message, undefined, undefined, () => undefined);
  }
}
