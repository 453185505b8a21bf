/** Python's binding rules, as a schedule's arguments are checked against a task's signature. */
import { describe, expect, it } from 'vitest';
import { bindProblem } from '../../../../src/queue/schedules/signature-check.js';
import type { TaskParameter } from '../../../../src/queue/protocol/task-info.js';

const p = (name: string, kind: TaskParameter['kind'], extra: Partial<TaskParameter> = {}): TaskParameter => ({ name, kind, ...extra });
/** def f(a, /, b, c=1, *args, d, e=2, **kw) and def g(x, y). */
const full = {
  text: '(a, /, b, c=1, *args, d, e=2, **kw)',
  parameters: [
    p('a', 'positional_only'),
    p('b', 'positional_or_keyword'),
    p('c', 'positional_or_keyword', { default: 1 }),
    p('args', 'var_positional'),
    p('d', 'keyword_only'),
    p('e', 'keyword_only', { default: 2 }),
    p('kw', 'var_keyword'),
  ],
};
const add = { text: '(x, y)', parameters: [p('x', 'positional_or_keyword'), p('y', 'positional_or_keyword')] };
const reprDefault = {
  text: '(x, when=datetime.now())',
  parameters: [p('x', 'positional_or_keyword'), p('when', 'positional_or_keyword', { default: 'datetime.now()', defaultIsRepr: true })],
};

describe('bindProblem', () => {
  it.each([
    [add, 2, [], null],
    [add, 1, ['y'], null],
    [add, 0, ['x', 'y'], null],
    [add, 3, [], 'takes 2 positional arguments but 3 were given'],
    [add, 1, [], "missing required argument: 'y'"],
    [add, 0, [], "missing required arguments: 'x', 'y'"],
    [add, 1, ['x'], "got multiple values for argument 'x'"],
    [add, 2, ['z'], "got an unexpected keyword argument 'z'"],
    [full, 2, ['d'], null],
    [full, 9, ['d', 'anything'], null],
    [full, 2, [], "missing required argument: 'd'"],
    [full, 1, ['b', 'd', 'a'], null],
    [reprDefault, 1, [], null],
  ] as const)('%#: %o with %i positional and keywords %j', (signature, count, kwargs, problem) => {
    expect(bindProblem(signature, count, kwargs)).toBe(problem);
  });

  it('a positional-only parameter passed by keyword is refused unless **kwargs takes it', () => {
    const onlyPositional = { text: '(a, /)', parameters: [p('a', 'positional_only')] };
    expect(bindProblem(onlyPositional, 0, ['a'])).toBe("got a positional-only argument passed as keyword argument: 'a'");
  });
});
