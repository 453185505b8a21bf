/**
 * The latest failed tasks from the result store, with arguments and traceback, limited to the
 * ones the reader may see (task-visibility.ts). A task admin's list is the newest failures of all
 * (by the indexed `date_done`); anyone else's is the failures among their own latest submissions.
 */
import type { Principal } from '../../auth/principal.js';
import { isTaskAdmin } from '../../auth/permissions.js';
import type { QueueService } from '../../queue/api/queue-service.js';
import type { JsonValue } from '../../queue/protocol/json.js';
import { mayReadTask } from './task-visibility.js';

export interface FailureRow {
  taskId: string;
  name: string | null;
  /** Who submitted it through the API; null for a task sent by another client. */
  user: string | null;
  args: JsonValue[] | null;
  kwargs: { [key: string]: JsonValue } | null;
  error: { type: string; message: string } | null;
  traceback: string | null;
  dateDone: string | null;
  worker: string | null;
}

/**
 * The index the task admins' list is read by: failures newest first, without walking every
 * result of the `date_done` index. Created once, in the background, the first time the page is
 * used; until it exists the list is read by the `date_done` index.
 */
export async function ensureFailureIndex(queue: QueueService): Promise<void> {
  await queue.ensureFailureIndex();
}

/** A non-admin's submissions searched for failures, newest first. */
const OWN_TASKS_SCANNED = 1_000;

function messageOf(value: unknown): string {
  if (typeof value === 'string') return value;
  if (Array.isArray(value)) return value.map((v) => (typeof v === 'string' ? v : JSON.stringify(v))).join(', ');
  return JSON.stringify(value ?? '');
}

export async function latestFailures(queue: QueueService, principal: Principal, limit: number): Promise<FailureRow[]> {
  let ofAccount: { userId: string; scanned: number } | undefined;
  if (!isTaskAdmin(principal)) {
    if (principal.userId === null) return [];
    ofAccount = { userId: principal.userId, scanned: OWN_TASKS_SCANNED };
  }
  const rows: FailureRow[] = [];
  for (const { result, entry } of await queue.latestFailures(limit, ofAccount)) {
    // The same check again, so the list never depends on the query above alone.
    if (!mayReadTask(principal, entry)) continue;
    rows.push({
      taskId: result.taskId,
      name: result.name ?? entry?.task_name ?? null,
      user: entry?.user ?? null,
      args: result.args ?? entry?.args ?? null,
      kwargs: result.kwargs ?? entry?.kwargs ?? null,
      error: result.exception === null ? null : { type: result.exception.exc_type, message: messageOf(result.exception.exc_message) },
      traceback: result.traceback,
      dateDone: result.dateDone?.toISOString() ?? null,
      worker: result.worker,
    });
  }
  return rows;
}
