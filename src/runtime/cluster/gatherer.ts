/**
 * The primary's side of a gather: puts a question to every API process that is ready and
 * collects their answers. A process that ends before answering is left out rather than waited
 * for; one that does not answer in time, or answers with an error, fails the gather, so the
 * request behind it never hangs.
 */
import {
  GATHER_RESULT,
  PEER_QUESTION,
  type GatherRequest,
  type GatherResult,
  type PeerAnswer,
  type PeerQuestion,
} from './gather-messages.js';

/** Below the API process's own wait, so it gets this error rather than a bare timeout. */
export const GATHER_TIMEOUT_MS = 4_000;

/** An API process as the primary sees it: node:cluster's Worker fits. */
export interface GatherPeer {
  readonly id: number;
  send(message: PeerQuestion | GatherResult, sendHandle: undefined, callback: (error: Error | null) => void): unknown;
}

interface Gather {
  waiting: Set<number>;
  answers: unknown[];
  settle: (result: { answers: unknown[] } | { error: Error }) => void;
}

export class ProcessGatherer {
  private nextId = 0;
  private readonly gathers = new Map<number, Gather>();

  constructor(
    private readonly peers: () => readonly GatherPeer[],
    private readonly timeoutMs = GATHER_TIMEOUT_MS,
  ) {}

  /** Answers an API process's request with the answers of all ready processes, or why not. */
  serve(asker: GatherPeer, request: GatherRequest): void {
    const reply = (result: Omit<GatherResult, 'type' | 'id'>): void => {
      asker.send({ type: GATHER_RESULT, id: request.id, ...result }, undefined, () => undefined);
    };
    this.gather(request.topic).then(
      (answers) => reply({ answers }),
      (err: unknown) => reply({ error: err instanceof Error ? err.message : String(err) }),
    );
  }

  /** Every ready API process's answer to `topic`, in no particular order. */
  gather(topic: string): Promise<unknown[]> {
    const id = this.nextId++;
    const peers = this.peers();
    return new Promise<unknown[]>((resolve, reject) => {
      const timer = setTimeout(
        () => gather.settle({ error: new Error(`API processes did not answer "${topic}" within ${this.timeoutMs} ms`) }),
        this.timeoutMs,
      );
      const gather: Gather = {
        waiting: new Set(peers.map((p) => p.id)),
        answers: [],
        settle: (result) => {
          if (!this.gathers.delete(id)) return;
          clearTimeout(timer);
          if ('error' in result) reject(result.error);
          else resolve(result.answers);
        },
      };
      this.gathers.set(id, gather);
      for (const peer of peers) {
        // A channel that closed as the process ends reports to the callback rather than as an
        // unhandled 'error' event; the exit that follows (or the timeout) settles the gather.
        peer.send({ type: PEER_QUESTION, id, topic }, undefined, () => undefined);
      }
      if (gather.waiting.size === 0) gather.settle({ answers: [] });
    });
  }

  /** An API process answered. */
  answered(peer: GatherPeer, message: PeerAnswer): void {
    const gather = this.gathers.get(message.id);
    if (gather === undefined || !gather.waiting.delete(peer.id)) return;
    if (message.error !== undefined) {
      gather.settle({ error: new Error(`API process ${peer.id} could not answer: ${message.error}`) });
      return;
    }
    gather.answers.push(message.value);
    if (gather.waiting.size === 0) gather.settle({ answers: gather.answers });
  }

  /** An API process ended: its answer will not come, and what it knew is gone with it. */
  gone(peer: GatherPeer): void {
    for (const gather of [...this.gathers.values()]) {
      if (gather.waiting.delete(peer.id) && gather.waiting.size === 0) gather.settle({ answers: gather.answers });
    }
  }
}
