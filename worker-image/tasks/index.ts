/**
 * Example task package for the TypeScript worker (load it with
 * WORKER_TASK_MODULES=worker-image/tasks/index.ts). Every exported defineTask() is registered.
 * Positional arguments follow the context; keyword arguments are in ctx.kwargs. `parameters`
 * describe both for the API's task list and its run form.
 */
import { defineTask } from '../../src/worker/task-definition.js';

export const add = defineTask({
  name: 'tasks.add',
  doc: 'Add two numbers.',
  parameters: [
    { name: 'x', annotation: 'number' },
    { name: 'y', annotation: 'number' },
  ],
  run: (_ctx, x: unknown, y: unknown): number => {
    if (typeof x !== 'number' || typeof y !== 'number') throw new TypeError('add() expects two numbers');
    return x + y;
  },
});

export const sleep = defineTask({
  name: 'tasks.sleep',
  doc: 'Sleep for the given number of seconds, then return it.',
  parameters: [{ name: 'seconds', annotation: 'number' }],
  run: (ctx, seconds: unknown): Promise<number> => {
    if (typeof seconds !== 'number' || !(seconds >= 0)) throw new TypeError('sleep() expects a number of seconds');
    return new Promise((resolve, reject) => {
      if (ctx.signal.aborted) return reject(ctx.signal.reason);
      const timer = setTimeout(() => resolve(seconds), seconds * 1000);
      ctx.signal.addEventListener(
        'abort',
        () => {
          clearTimeout(timer);
          reject(ctx.signal.reason);
        },
        { once: true },
      );
    });
  },
});

export const fail = defineTask({
  name: 'tasks.fail',
  doc: 'Always fail, with the given message.',
  parameters: [{ name: 'message', annotation: 'string', default: 'failed on purpose' }],
  run: (_ctx, message: unknown = 'failed on purpose'): never => {
    throw new Error(String(message));
  },
});

export const noop = defineTask({
  name: 'tasks.noop',
  doc: 'Do nothing.',
  parameters: [],
  run: (_ctx): null => null,
});

export const whoami = defineTask({
  name: 'tasks.whoami',
  doc: 'Return the name of the user who submitted the task.',
  parameters: [],
  run: (ctx): string | null => ctx.authenticatedUser,
});

export const writeRecord = defineTask({
  name: 'tasks.write_record',
  parameters: [
    { name: 'database', kind: 'keyword_only', annotation: 'string' },
    { name: 'collection', kind: 'keyword_only', annotation: 'string' },
    { name: 'record', kind: 'keyword_only', annotation: 'object' },
  ],
  doc: 'Insert kwargs["record"] into the data-store collection kwargs["database"].kwargs["collection"] with the submitting user\'s permissions; return its id.',
  run: async (ctx): Promise<string> => {
    const { database, collection, record } = ctx.kwargs;
    if (typeof database !== 'string' || typeof collection !== 'string') {
      throw new TypeError('write_record() needs "database" and "collection" keyword arguments');
    }
    if (record === null || typeof record !== 'object' || Array.isArray(record)) {
      throw new TypeError('write_record() needs a "record" object keyword argument');
    }
    // The same rules as the REST API's record writes: a refused record is a ValueError.
    return String(await ctx.dataStore.insertRecord(ctx.authenticatedUser, database, collection, record));
  },
});
