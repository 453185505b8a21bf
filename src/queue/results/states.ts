/** Celery task states (celery/states.py). PENDING is never stored: no document means PENDING. */
export const TASK_STATES = ['PENDING', 'RECEIVED', 'STARTED', 'SUCCESS', 'FAILURE', 'REVOKED', 'RETRY', 'REJECTED'] as const;
export type TaskState = (typeof TASK_STATES)[number];

/** States that get `date_done` and after which the result does not change. */
export const READY_STATES: ReadonlySet<TaskState> = new Set<TaskState>(['SUCCESS', 'FAILURE', 'REVOKED']);
/** States whose `result` holds an exception dict. */
export const EXCEPTION_STATES: ReadonlySet<TaskState> = new Set<TaskState>(['FAILURE', 'RETRY', 'REVOKED']);

export const isTaskState = (value: unknown): value is TaskState =>
  typeof value === 'string' && (TASK_STATES as readonly string[]).includes(value);
