/**
 * Counts Celery task events by task name and state. Only `task-received` names the task; the
 * later events carry just its id, so the name is remembered from `task-received` until the task
 * ends (as Celery's own event state does), in a map of bounded size: events of a task whose
 * `task-received` was missed (sent before this process listened) count under OTHER.
 */
import type { BatchedCounter } from './registry.js';
import { OTHER } from './labels.js';

/** Task event type → the Celery state it reports. */
export const EVENT_STATES: Readonly<Record<string, string>> = {
  'task-received': 'RECEIVED',
  'task-started': 'STARTED',
  'task-succeeded': 'SUCCESS',
  'task-failed': 'FAILURE',
  'task-retried': 'RETRY',
  'task-revoked': 'REVOKED',
  'task-rejected': 'REJECTED',
};
const FINAL = new Set(['task-succeeded', 'task-failed', 'task-revoked', 'task-rejected']);

/** Running and queued tasks whose names are remembered; the oldest go first. */
const MAX_REMEMBERED = 20_000;

export interface TaskEvent {
  type: string;
  uuid?: unknown;
  name?: unknown;
}

export class TaskOutcomes {
  private readonly names = new Map<string, string>();

  /** `label` maps a task name to its label value (OTHER for names no worker registers). */
  constructor(
    private readonly counter: BatchedCounter<'task' | 'state'>,
    private readonly label: (taskName: string) => string,
  ) {}

  observe(event: TaskEvent): void {
    const state = EVENT_STATES[event.type];
    if (state === undefined || typeof event.uuid !== 'string') return;
    let task = this.names.get(event.uuid);
    if (event.type === 'task-received' && typeof event.name === 'string') {
      task = this.label(event.name);
      this.remember(event.uuid, task);
    }
    if (FINAL.has(event.type)) this.names.delete(event.uuid);
    this.counter.inc({ task: task ?? OTHER, state });
  }

  private remember(id: string, task: string): void {
    this.names.delete(id);
    this.names.set(id, task);
    if (this.names.size > MAX_REMEMBERED) {
      const oldest = this.names.keys().next().value;
      if (oldest !== undefined) this.names.delete(oldest);
    }
  }
}
