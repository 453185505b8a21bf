/** The tasks a worker runs, by name, and how they look in Celery's `registered` reply. */
import type { JsonObject } from '../queue/protocol/json.js';
import { formatRegisteredTasks } from '../queue/protocol/registered-tasks.js';
import { formatTaskInfoReply } from '../queue/protocol/task-info.js';
import { isTaskDefinition, taskSignature, type TaskDefinition } from './task-definition.js';

/** Celery's DEFAULT_TASK_INFO_ITEMS: what plain `celery inspect registered` asks for. */
export const DEFAULT_TASK_INFO_ITEMS = ['exchange', 'routing_key', 'rate_limit'] as const;

export class DuplicateTaskError extends Error {
  constructor(name: string) {
    super(`Task "${name}" is defined twice`);
    this.name = 'DuplicateTaskError';
  }
}

export class TaskRegistry {
  private readonly tasks = new Map<string, TaskDefinition>();

  constructor(definitions: Iterable<TaskDefinition> = []) {
    for (const definition of definitions) this.register(definition);
  }

  register(definition: TaskDefinition): void {
    if (!isTaskDefinition(definition)) throw new TypeError('not a task definition (use defineTask)');
    const existing = this.tasks.get(definition.name);
    if (existing !== undefined && existing !== definition) throw new DuplicateTaskError(definition.name);
    this.tasks.set(definition.name, definition);
  }

  get(name: string): TaskDefinition | undefined {
    return this.tasks.get(name);
  }

  get names(): string[] {
    return [...this.tasks.keys()].sort();
  }

  get size(): number {
    return this.tasks.size;
  }

  /**
   * Celery's `registered` lines. Attributes mirror a Python task's: `__doc__` is the doc, and
   * `description` too (the attribute newer Celery workers can send instead, see the API's task list),
   * `time_limit`/`soft_time_limit` the limits, `ignore_result` and `acks_late` (always true
   * here: this worker acks after the task). Unknown or unset attributes are None, so left out.
   */
  registeredReply(taskinfoitems: readonly string[] = DEFAULT_TASK_INFO_ITEMS): string[] {
    return formatRegisteredTasks(
      [...this.tasks.values()].map((task) => ({
        name: task.name,
        attributes: {
          __doc__: task.doc,
          description: task.doc,
          name: task.name,
          time_limit: task.timeLimitSeconds === null ? null : String(task.timeLimitSeconds),
          soft_time_limit: task.softTimeLimitSeconds === null ? null : String(task.softTimeLimitSeconds),
          ignore_result: task.ignoreResult ? 'True' : 'False',
          acks_late: 'True',
        },
      })),
      taskinfoitems,
    );
  }

  /** The `cybercom_task_info` reply: each task's doc and declared signature, Celery's `celery.*` built-ins left out as Python's extension does. */
  taskInfoReply(): JsonObject {
    return formatTaskInfoReply(
      this.names
        .filter((name) => !name.startsWith('celery.'))
        .map((name) => {
          const task = this.tasks.get(name) as TaskDefinition;
          return { name, doc: task.doc, signature: taskSignature(task) };
        }),
    );
  }
}
