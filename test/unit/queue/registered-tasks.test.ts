import { describe, expect, it } from 'vitest';
import { formatRegisteredTasks, parseRegisteredTask } from '../../../src/queue/protocol/registered-tasks.js';

describe('registered reply', () => {
  const tasks = [
    { name: 'proj.tasks.nodoc', attributes: { __doc__: null } },
    { name: 'proj.tasks.add', attributes: { __doc__: 'Add two numbers.', acks_late: 'False' } },
  ];

  it('formats like Celery: sorted, "name [attr=value ...]", bare name when nothing has a value', () => {
    expect(formatRegisteredTasks(tasks, ['__doc__'])).toEqual(['proj.tasks.add [__doc__=Add two numbers.]', 'proj.tasks.nodoc']);
    expect(formatRegisteredTasks(tasks, ['__doc__', 'acks_late'])).toEqual([
      'proj.tasks.add [__doc__=Add two numbers. acks_late=False]',
      'proj.tasks.nodoc',
    ]);
    expect(formatRegisteredTasks(tasks, ['exchange', 'routing_key', 'rate_limit'])).toEqual(['proj.tasks.add', 'proj.tasks.nodoc']);
  });

  it('keeps multi-line docstrings raw', () => {
    const doc = 'Add.\n\n    Long description = with equals.';
    expect(formatRegisteredTasks([{ name: 't', attributes: { __doc__: doc } }], ['__doc__'])).toEqual([`t [__doc__=${doc}]`]);
  });

  it('parses lines back using the requested attribute names', () => {
    expect(parseRegisteredTask('proj.tasks.add [__doc__=Add two numbers.]', ['__doc__'])).toEqual({
      name: 'proj.tasks.add',
      attributes: { __doc__: 'Add two numbers.' },
    });
    expect(parseRegisteredTask('proj.tasks.nodoc', ['__doc__'])).toEqual({ name: 'proj.tasks.nodoc', attributes: {} });
    expect(parseRegisteredTask('t [__doc__=Sum: a=1 b [x] acks_late=True]', ['__doc__', 'acks_late'])).toEqual({
      name: 't',
      attributes: { __doc__: 'Sum: a=1 b [x]', acks_late: 'True' },
    });
    expect(parseRegisteredTask('t [__doc__=line one\n  line two]', ['__doc__'])).toEqual({
      name: 't',
      attributes: { __doc__: 'line one\n  line two' },
    });
  });

  it('round-trips', () => {
    const lines = formatRegisteredTasks(tasks, ['__doc__']);
    expect(lines.map((l) => parseRegisteredTask(l, ['__doc__']))).toEqual([
      { name: 'proj.tasks.add', attributes: { __doc__: 'Add two numbers.' } },
      { name: 'proj.tasks.nodoc', attributes: {} },
    ]);
  });
});
