import { describe, expect, it } from 'vitest';
import { defineTask, isTaskDefinition } from '../../../src/worker/task-definition.js';
import { DuplicateTaskError, TaskRegistry } from '../../../src/worker/task-registry.js';

const add = defineTask({ name: 'tasks.add', doc: 'Add two numbers.', run: (_ctx, x: number, y: number) => x + y });
const nodoc = defineTask({ name: 'tasks.nodoc', run: () => null, timeLimitSeconds: 5 });

describe('defineTask', () => {
  it('creates frozen, recognisable definitions', () => {
    expect(isTaskDefinition(add)).toBe(true);
    expect(isTaskDefinition({ name: 'x', run: () => 1 })).toBe(false);
    expect(Object.isFrozen(add)).toBe(true);
    expect(add).toMatchObject({ name: 'tasks.add', doc: 'Add two numbers.', timeLimitSeconds: null, ignoreResult: false });
  });

  it('refuses bad names and limits', () => {
    expect(() => defineTask({ name: 'has space', run: () => 1 })).toThrow(TypeError);
    expect(() => defineTask({ name: 'ok', run: () => 1, timeLimitSeconds: 0 })).toThrow(TypeError);
  });
});

describe('defineTask parameters', () => {
  const run = () => null;

  it('are positional-only by default, frozen, and absent means "not described"', () => {
    const task = defineTask({ name: 't', parameters: [{ name: 'x' }, { name: 'opts', kind: 'keyword_only', default: { a: [1] } }], run });
    expect(task.parameters).toEqual([
      { name: 'x', kind: 'positional_only' },
      { name: 'opts', kind: 'keyword_only', default: { a: [1] } },
    ]);
    expect(Object.isFrozen(task.parameters)).toBe(true);
    expect(defineTask({ name: 't', run }).parameters).toBeNull();
    expect(defineTask({ name: 't', parameters: [], run }).parameters).toEqual([]);
  });

  it('are checked the way Python checks a def line', () => {
    const bad: [Parameters<typeof defineTask>[0]['parameters'], RegExp][] = [
      [[{ name: 'not valid' }], /not an identifier/],
      [[{ name: 'x' }, { name: 'x', kind: 'keyword_only' }], /declared twice/],
      [[{ name: 'k', kind: 'keyword_only' }, { name: 'x' }], /follows a keyword_only/],
      [
        [
          { name: 'a', kind: 'var_positional' },
          { name: 'b', kind: 'var_positional' },
        ],
        /second var_positional/,
      ],
      [[{ name: 'a', kind: 'var_keyword', default: {} }], /cannot have a default/],
      [[{ name: 'a', default: 1 }, { name: 'b' }], /no default but follows/],
      [[{ name: 'a', default: new Date(0) as never }], /not JSON/],
      [[{ name: 'a', default: Number.NaN }], /not JSON/],
      [[{ name: 'a', kind: 'positional_or_keyword' as never }], /unknown kind/],
    ];
    for (const [parameters, message] of bad) expect(() => defineTask({ name: 't', parameters, run })).toThrow(message);
    // A keyword-only parameter without a default after one with a default is fine in Python too.
    expect(() =>
      defineTask({
        name: 't',
        parameters: [
          { name: 'a', kind: 'keyword_only', default: 1 },
          { name: 'b', kind: 'keyword_only' },
        ],
        run,
      }),
    ).not.toThrow();
  });
});

describe('TaskRegistry', () => {
  const registry = new TaskRegistry([nodoc, add]);

  it('looks tasks up by name and lists names sorted', () => {
    expect(registry.get('tasks.add')).toBe(add);
    expect(registry.get('tasks.missing')).toBeUndefined();
    expect(registry.names).toEqual(['tasks.add', 'tasks.nodoc']);
  });

  it("answers `registered` like Celery: bare names for the default items, docs with '__doc__'", () => {
    expect(registry.registeredReply()).toEqual(['tasks.add', 'tasks.nodoc']);
    expect(registry.registeredReply(['__doc__'])).toEqual(['tasks.add [__doc__=Add two numbers.]', 'tasks.nodoc']);
    expect(registry.registeredReply(['__doc__', 'time_limit'])).toEqual([
      'tasks.add [__doc__=Add two numbers.]',
      'tasks.nodoc [time_limit=5]',
    ]);
  });

  it('answers cybercom_task_info for its tasks but Celery’s celery.* built-ins', () => {
    const registry = new TaskRegistry([
      defineTask({
        name: 'tasks.sum',
        doc: 'Sum.',
        parameters: [{ name: 'values', kind: 'var_positional', annotation: 'number' }],
        run: () => 0,
      }),
      defineTask({ name: 'celery.chord_unlock', doc: 'Built in.', run: () => null }),
    ]);
    expect(registry.taskInfoReply()).toEqual({
      version: 1,
      tasks: {
        'tasks.sum': {
          doc: 'Sum.',
          signature: { text: '(*values: number)', parameters: [{ name: 'values', kind: 'var_positional', annotation: 'number' }] },
        },
      },
    });
  });

  it('refuses two different tasks with one name', () => {
    expect(() => new TaskRegistry([add, defineTask({ name: 'tasks.add', run: () => 0 })])).toThrow(DuplicateTaskError);
    expect(() => new TaskRegistry([add, add])).not.toThrow();
  });
});
