/**
 * API processes and their primary without processes: the primary's ProcessGatherer and each
 * process's ClusterPeer talk over in-memory channels exactly as they do over IPC (messages
 * delivered asynchronously, none once a process is dead).
 */
import { EventEmitter } from 'node:events';
import { isGatherRequest, isPeerAnswer } from '../../src/runtime/cluster/gather-messages.js';
import { ProcessGatherer, type GatherPeer } from '../../src/runtime/cluster/gatherer.js';
import { ClusterPeer, type PrimaryChannel } from '../../src/runtime/cluster/peer.js';

/** One API process: its IPC channel seen from both ends and its peer. */
export class MemoryProcess implements GatherPeer {
  readonly toProcess = new EventEmitter();
  readonly peer: ClusterPeer;
  alive = true;

  constructor(
    readonly id: number,
    onSend: (from: MemoryProcess, message: unknown) => void,
    timeoutMs?: number,
  ) {
    const channel: PrimaryChannel = {
      send: (message) => {
        // Through JSON, as IPC serializes: an answer must survive it.
        const copy: unknown = JSON.parse(JSON.stringify(message));
        if (this.alive) queueMicrotask(() => onSend(this, copy));
      },
      on: (event, listener) => this.toProcess.on(event, listener),
      off: (event, listener) => this.toProcess.off(event, listener),
    };
    this.peer = new ClusterPeer(channel, timeoutMs).start();
  }

  send(message: unknown): void {
    const copy: unknown = JSON.parse(JSON.stringify(message));
    if (this.alive) queueMicrotask(() => this.toProcess.emit('message', copy));
  }
}

/** A primary with `count` API processes, wired as primary.ts wires them. */
export function memoryCluster(count: number, options: { gatherTimeoutMs?: number; askTimeoutMs?: number } = {}) {
  const processes: MemoryProcess[] = [];
  const gatherer = new ProcessGatherer(() => processes.filter((p) => p.alive), options.gatherTimeoutMs);
  const onSend = (from: MemoryProcess, message: unknown): void => {
    if (isPeerAnswer(message)) gatherer.answered(from, message);
    if (isGatherRequest(message)) gatherer.serve(from, message);
  };
  for (let i = 0; i < count; i++) processes.push(new MemoryProcess(i + 1, onSend, options.askTimeoutMs));
  return { processes, gatherer };
}
