/** What an API worker process tells the primary over the cluster's IPC channel. */
export const WORKER_READY = 'cybercom:api-process-ready';

export interface WorkerReadyMessage {
  type: typeof WORKER_READY;
  url: string;
}

export function isWorkerReady(message: unknown): message is WorkerReadyMessage {
  return typeof message === 'object' && message !== null && (message as { type?: unknown }).type === WORKER_READY;
}
