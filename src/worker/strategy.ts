/**
 * Celery's task strategy: what one consumed message is to the worker. A message that is not a
 * task message is refused (and never requeued, so it cannot loop); a task nobody registered is
 * refused with a stored NotRegistered failure; anything else becomes a request to run.
 */
import type { ConsumeMessage } from 'amqplib';
import { parseTaskMessage, type IncomingTask, type RejectedMessage } from '../queue/protocol/task-message-parser.js';
import type { TaskDefinition } from './task-definition.js';

export type Received =
  | ({ kind: 'invalid' } & RejectedMessage)
  | { kind: 'unregistered'; task: IncomingTask }
  | { kind: 'task'; task: IncomingTask; definition: TaskDefinition };

export function receiveMessage(message: ConsumeMessage, lookup: (taskName: string) => TaskDefinition | undefined): Received {
  const parsed = parseTaskMessage(message);
  if (!parsed.ok) {
    const { ok: _ok, ...rejected } = parsed;
    return { kind: 'invalid', ...rejected };
  }
  const definition = lookup(parsed.task.taskName);
  if (definition === undefined) return { kind: 'unregistered', task: parsed.task };
  return { kind: 'task', task: parsed.task, definition };
}
