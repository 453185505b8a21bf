/**
 * Which tasks a staff member sees on the Operations page, by the rule the API applies to a task's
 * result (GET /api/queue/task/<id>/): task admins (and superusers) see every task; anyone else
 * only the tasks they submitted themselves, as the task log records them.
 */
import type { Principal } from '../../auth/principal.js';
import { isTaskAdmin } from '../../auth/permissions.js';
import type { TaskLog, TaskLogEntry } from '../../queue/api/task-log.js';

/** The log entries of `ids` (id → entry), for the submitter column and the access rule. */
export async function logEntries(log: TaskLog, ids: string[]): Promise<Map<string, TaskLogEntry>> {
  if (ids.length === 0) return new Map();
  const rows = await log.collection.find({ _id: { $in: ids } }).toArray();
  return new Map(rows.map((row) => [row._id, row]));
}

/** Whether `principal` may read the result of a task with this log entry (null: not in the log). */
export function mayReadTask(principal: Principal, entry: TaskLogEntry | null | undefined): boolean {
  if (isTaskAdmin(principal)) return true;
  return entry !== null && entry !== undefined && principal.userId !== null && entry.user_id === principal.userId;
}
