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

  it('refuses two different tasks with one name', () => {
    expect(() => new TaskRegistry([add, defineTask({ name: 'tasks.add', run: () => 0 })])).toThrow(DuplicateTaskError);
    expect(() => new TaskRegistry([add, add])).not.toThrow();
  });
});
