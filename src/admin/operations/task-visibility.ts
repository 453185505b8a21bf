/**
 * Which tasks a staff member sees on the Operations page, by the rule the API applies to a task's
 * result (GET /api/queue/task/<id>/): task admins (and superusers) see every task; anyone else
 * only the tasks they submitted themselves, as the task log records them.
 */
import type { Principal } from '../../auth/principal.js';
import { isTaskAdmin } from '../../auth/permissions.js';
import type { TaskLogEntry } from '../../queue/api/queue-service.js';

/** Whether `principal` may read the result of a task with this log entry (null: not in the log). */
export function mayReadTask(principal: Principal, entry: TaskLogEntry | null | undefined): boolean {
  if (isTaskAdmin(principal)) return true;
  return entry !== null && entry !== undefined && principal.userId !== null && entry.user_id === principal.userId;
}
