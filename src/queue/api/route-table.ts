/**
 * The task-queue endpoints, declared once: routes.ts and dead-letter-routes.ts serve them and
 * the app's route table mounts them at /api/queue.
 *   GET  /                      available tasks (envelope) and live queues
 *   GET  /run/<task>/           task description and an example curl line
 *   POST /run/<task>/           submit (202 after the broker's confirm; ?wait=<s> for the result)
 *   GET  /task/<id>/            one run: log, state, result or error
 *   POST /task/<id>/revoke/     revoke (submitter or task admin)
 *   GET  /usertasks/            the caller's history, newest first
 *   GET, DELETE /dead-letters/  parked task messages: list, purge (task admins)
 */
import { COMMON, ENVELOPE_REF, ERRORS, PAGING, jsonBody, ok, param } from '../../http/openapi-parts.js';
import { route } from '../../http/route-table.js';

const tags = ['queue'];
/** Dead letters one GET shows unless told (each is fetched and handed back one by one), and at most. */
export const DEAD_LETTER_LIMIT = { default: 100, max: 1_000 };
/** The run's id is `:id` in the patterns and `task_id` in the document, as in the answers' fields. */
const RUN_ID = { id: 'task_id' };

export const QUEUE_ROUTES = {
  tasks: route('/', {
    GET: {
      tags,
      summary: 'Tasks offered by live workers (name, docstring, queues, run URL) and the live queues',
      parameters: [...COMMON, ...PAGING, param('refresh', 'Task admins: refresh the cached list now', { enum: ['true'] })],
      responses: { 200: ok('Envelope of tasks plus "queues" and "workers"'), ...ERRORS },
    },
  }),
  run: route('/run/:task/', {
    GET: {
      tags,
      summary: 'Task description, default queue and an example curl line',
      parameters: COMMON,
      responses: { 200: ok('Task'), ...ERRORS },
    },
    POST: {
      tags,
      summary: 'Submit a task (202 after the broker confirmed; ?wait=<s> returns the result when done in time)',
      parameters: [...COMMON, param('wait', 'Seconds to wait for the result (max TASK_WAIT_MAX_S)', { type: 'number' })],
      request: jsonBody({
        type: 'object',
        required: ['function'],
        additionalProperties: false,
        properties: {
          function: { type: 'string' },
          queue: { type: 'string' },
          args: { type: 'array' },
          kwargs: { type: 'object' },
          tags: { type: 'array', items: { type: 'string' } },
        },
      }),
      responses: { 200: ok('{task_id, status, result | error}'), 202: ok('{task_id, status: "PENDING", result_url}'), ...ERRORS },
    },
  }),
  task: route(
    '/task/:id/',
    {
      GET: {
        tags,
        summary: 'One run: submission log, state, result or error (?wait=<s> answers once it finished or the time is up)',
        parameters: [
          ...COMMON,
          param('wait', 'Seconds to hold the answer until the run finished (max TASK_WAIT_MAX_S)', { type: 'number' }),
        ],
        responses: { 200: ok('Run'), ...ERRORS },
      },
    },
    RUN_ID,
  ),
  revoke: route(
    '/task/:id/revoke/',
    {
      POST: {
        tags,
        summary: 'Revoke a pending or running task ({"terminate": true} aborts a running one)',
        responses: { 200: ok('Run'), ...ERRORS },
      },
    },
    RUN_ID,
  ),
  history: route('/usertasks/', {
    GET: {
      tags,
      summary: "The caller's task history, newest first",
      parameters: [
        ...COMMON,
        ...PAGING,
        param('taskname', 'Comma-separated task names'),
        param('tag', 'One tag'),
        param('status', 'A task state, e.g. SUCCESS'),
      ],
      responses: { 200: ok('Envelope of runs', ENVELOPE_REF), ...ERRORS },
    },
  }),
  deadLetters: route('/dead-letters/', {
    GET: {
      tags,
      summary: 'Task admins: the parked (dead-lettered) task messages, left in place (id, task, arguments, reason, queue, time)',
      parameters: [
        ...COMMON,
        param('limit', `Messages shown at most (default ${DEAD_LETTER_LIMIT.default})`, {
          type: 'integer',
          minimum: 1,
          maximum: DEAD_LETTER_LIMIT.max,
        }),
      ],
      responses: { 200: ok('{count, shown, results}'), ...ERRORS },
    },
    DELETE: {
      tags,
      summary: 'Task admins: purge the dead-letter queue',
      responses: { 200: ok('{purged}'), ...ERRORS },
    },
  }),
};
