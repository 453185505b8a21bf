/**
 * Validation of task submissions (docs/api-behaviour.md, "Task submissions"), pure so it is unit-tested as a table:
 * `function` must equal the task in the path; `args` array, `kwargs` object, `tags` array of
 * strings; `queue` a string (whether it is live is checked against the task catalog). The body's
 * outline (a JSON object with only the fields the route declares) is checked before, from the
 * route's declaration (route-table.ts).
 */
import { badRequest } from '../../errors.js';
import type { ExactJsonObject, ExactJsonValue } from '../protocol/exact-numbers.js';
import isPlainObject from 'is-plain-obj';

export interface Submission {
  /** As submitted: numbers JSON.parse would change are kept as written (exact-numbers.ts). */
  args: ExactJsonValue[];
  kwargs: ExactJsonObject;
  tags: string[];
  queue: string | undefined;
}

/** Celery-style dotted task names (module.function), also `proj:task`-style separators. */
const TASK_NAME = /^[A-Za-z_][A-Za-z0-9_.:-]{0,199}$/;
const QUEUE_NAME = /^[A-Za-z0-9_.:@-]{1,200}$/;
const MAX_TAGS = 50;
const MAX_TAG_LENGTH = 200;

export function validateTaskName(name: string): string {
  if (!TASK_NAME.test(name)) {
    throw badRequest('invalid_task_name', 'Task names are dotted identifiers such as "tasks.add".');
  }
  return name;
}

/** `body`: a submission's fields, already known to be a JSON object with only the declared ones. */
export function parseSubmission(body: Readonly<Record<string, unknown>>, taskName: string): Submission {
  if (body.function !== taskName) {
    throw badRequest(
      'function_mismatch',
      body.function === undefined
        ? `The body must repeat the task name: "function": "${taskName}".`
        : `"function" must equal the task in the URL ("${taskName}").`,
    );
  }
  const args = body.args === undefined ? [] : body.args;
  if (!Array.isArray(args)) throw badRequest('invalid_args', '"args" must be an array.');
  const kwargs = body.kwargs === undefined ? {} : body.kwargs;
  if (!isPlainObject(kwargs)) throw badRequest('invalid_kwargs', '"kwargs" must be an object.');
  if (Object.keys(kwargs).some((k) => k === '__proto__')) throw badRequest('invalid_kwargs', '"kwargs" may not contain "__proto__".');
  const tags = body.tags === undefined ? [] : body.tags;
  if (!Array.isArray(tags) || !tags.every((t) => typeof t === 'string')) {
    throw badRequest('invalid_tags', '"tags" must be an array of strings.');
  }
  if (tags.length > MAX_TAGS || tags.some((t) => t.length === 0 || t.length > MAX_TAG_LENGTH)) {
    throw badRequest('invalid_tags', `At most ${MAX_TAGS} tags of 1 to ${MAX_TAG_LENGTH} characters.`);
  }
  let queue: string | undefined;
  if (body.queue !== undefined && body.queue !== null && body.queue !== '') {
    if (typeof body.queue !== 'string' || !QUEUE_NAME.test(body.queue)) throw badRequest('invalid_queue', '"queue" must be a queue name.');
    queue = body.queue;
  }
  return { args: args as ExactJsonValue[], kwargs: kwargs as ExactJsonObject, tags: [...new Set(tags as string[])], queue };
}

/** `?wait=<seconds>`: a number from 0 to the configured cap. */
export function parseWait(raw: unknown, capSeconds: number): number | undefined {
  if (raw === undefined || raw === '') return undefined;
  if (typeof raw !== 'string' || !/^\d+(\.\d+)?$/.test(raw)) {
    throw badRequest('invalid_wait', '"wait" must be a number of seconds.');
  }
  const seconds = Number(raw);
  if (seconds > capSeconds) throw badRequest('invalid_wait', `"wait" may be at most ${capSeconds} seconds.`);
  return seconds;
}
