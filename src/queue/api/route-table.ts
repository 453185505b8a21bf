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
 *   /schedules/...              schedules: list, create, read, change, delete, pause, resume,
 *                               run now, next fire times, runs (see SCHEDULE_ROUTES)
 */
import type { BodyParser } from '../../http/body.js';
import { COMMON, ENVELOPE_REF, ERRORS, PAGING, jsonBody, ok, param } from '../../http/openapi-parts.js';
import { route as anyRoute, type RouteDecl } from '../../http/route-table.js';
import { parseExactJsonBody } from '../protocol/exact-numbers.js';

/** Task arguments reach Python workers written as submitted (`3.0` stays a float, exact-numbers.ts). */
const TASK_JSON: BodyParser = { name: 'exact-json', parse: parseExactJsonBody };

/** A queue route: its bodies are read with TASK_JSON (a schedule's arguments are a task's too). */
const route = (path: string, operations: RouteDecl['operations'], params?: RouteDecl['params']): RouteDecl =>
  anyRoute(path, operations, params, TASK_JSON);

/** An optional body that is an object with only `properties`. */
const optionalBody = (properties: Record<string, unknown>): NonNullable<RouteDecl['operations']['POST']>['request'] => ({
  body: { required: false, content: { 'application/json': { schema: { type: 'object', additionalProperties: false, properties } } } },
});

const tags = ['queue'];
/** Dead letters one GET shows unless told (each is fetched and handed back one by one), and at most. */
export const DEAD_LETTER_LIMIT = { default: 100, max: 1_000 };
/** The run's id is `:id` in the patterns and `task_id` in the document, as in the answers' fields. */
const RUN_ID = { id: 'task_id' };
/** A schedule's id is `:id` in the patterns and `schedule_id` in the document. */
const SCHEDULE_ID = { id: 'schedule_id' };
/** Fire times the preview gives unless told, and at most. */
export const PREVIEW_COUNT = { default: 10, max: 100 };

/** A schedule's body (create; an update sends any of these fields). */
const SCHEDULE_BODY = {
  type: 'object',
  additionalProperties: false,
  properties: {
    name: { type: 'string' },
    task: { type: 'string' },
    args: { type: 'array' },
    kwargs: { type: 'object' },
    queue: { type: 'string' },
    crontab: { type: 'string', description: 'Five cron fields, read in `timezone`' },
    timezone: { type: 'string', description: 'IANA time zone of the crontab (default UTC)' },
    interval: {
      type: 'object',
      properties: {
        every: { type: 'number' },
        period: { enum: ['seconds', 'minutes', 'hours', 'days'] },
        anchor: { type: 'string', format: 'date-time' },
      },
    },
    solar: {
      type: 'object',
      properties: {
        event: { enum: ['sunrise', 'sunset', 'dawn', 'dusk', 'solar_noon'] },
        latitude: { type: 'number' },
        longitude: { type: 'number' },
      },
    },
    clocked: { type: 'string', format: 'date-time', description: 'One run at this time' },
    overlap: { enum: ['allow', 'skip', 'buffer_one', 'cancel_previous'] },
    catch_up_window: { type: 'number', description: 'Seconds: fires missed within it run once, late' },
    jitter: { type: 'number', description: 'Seconds of random delay added to each fire' },
    start_time: { type: 'string', format: 'date-time' },
    end_time: { type: 'string', format: 'date-time' },
    max_runs: { type: 'integer', minimum: 1 },
    expires: { type: 'number', description: 'Seconds each fired task may wait before it expires' },
    paused: { type: 'boolean' },
    note: { type: 'string' },
  },
};

/** The schedules' endpoints, under the queue's mount. */
const SCHEDULE_ROUTES = {
  schedules: route('/schedules/', {
    GET: {
      tags,
      summary: "The caller's schedules (task admins: everyone's), by name, with their next fire and last outcome",
      parameters: [...COMMON, ...PAGING],
      responses: { 200: ok('Envelope of schedules', ENVELOPE_REF), ...ERRORS },
    },
    POST: {
      tags,
      summary: 'Create a schedule (needs cybercom_queue.schedule_tasks and the right to run its task)',
      parameters: COMMON,
      request: jsonBody({ ...SCHEDULE_BODY, required: ['name', 'task'] }),
      responses: { 201: ok('Schedule'), ...ERRORS },
    },
  }),
  schedule: route(
    '/schedules/:id/',
    {
      GET: { tags, summary: 'One schedule', parameters: COMMON, responses: { 200: ok('Schedule'), ...ERRORS } },
      PATCH: {
        tags,
        summary: 'Change a schedule (the fields given replace the stored ones; the next fire is computed anew)',
        parameters: COMMON,
        request: jsonBody(SCHEDULE_BODY),
        responses: { 200: ok('Schedule'), ...ERRORS },
      },
      DELETE: { tags, summary: 'Delete a schedule and its run log', parameters: COMMON, responses: { 204: ok('Deleted'), ...ERRORS } },
    },
    SCHEDULE_ID,
  ),
  schedulePause: route(
    '/schedules/:id/pause/',
    {
      POST: {
        tags,
        summary: 'Pause a schedule, with an optional note saying why',
        parameters: COMMON,
        request: optionalBody({ note: { type: 'string' } }),
        responses: { 200: ok('Schedule'), ...ERRORS },
      },
    },
    SCHEDULE_ID,
  ),
  scheduleResume: route(
    '/schedules/:id/resume/',
    {
      POST: {
        tags,
        summary: 'Resume a paused schedule (fires that passed meanwhile are not caught up)',
        parameters: COMMON,
        request: optionalBody({}),
        responses: { 200: ok('Schedule'), ...ERRORS },
      },
    },
    SCHEDULE_ID,
  ),
  scheduleRun: route(
    '/schedules/:id/run/',
    {
      POST: {
        tags,
        summary: "Run now: one run of the schedule's task, as its owner, beside its own fires",
        parameters: COMMON,
        request: optionalBody({}),
        responses: { 202: ok('{task_id, status, result_url}'), ...ERRORS },
      },
    },
    SCHEDULE_ID,
  ),
  scheduleNext: route(
    '/schedules/:id/next/',
    {
      GET: {
        tags,
        summary: 'The next fire times',
        parameters: [
          ...COMMON,
          param('count', `How many (default ${PREVIEW_COUNT.default})`, { type: 'integer', minimum: 1, maximum: PREVIEW_COUNT.max }),
        ],
        responses: { 200: ok('{next_fire_times}'), ...ERRORS },
      },
    },
    SCHEDULE_ID,
  ),
  scheduleRuns: route(
    '/schedules/:id/runs/',
    {
      GET: {
        tags,
        summary: "The schedule's run log, newest first: each fire published (its task), skipped, refused, failed or missed",
        parameters: [...COMMON, ...PAGING],
        responses: { 200: ok('Envelope of runs', ENVELOPE_REF), ...ERRORS },
      },
    },
    SCHEDULE_ID,
  ),
};

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
        parameters: COMMON,
        request: optionalBody({ terminate: { type: 'boolean' } }),
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
      parameters: COMMON,
      responses: { 200: ok('{purged}'), ...ERRORS },
    },
  }),
  ...SCHEDULE_ROUTES,
};
