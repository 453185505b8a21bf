import { describe, expect, it } from 'vitest';
import {
  JS_EXCEPTION_MODULE,
  NotRegistered,
  PythonException,
  TaskRevokedError,
  TimeLimitExceeded,
  formatTraceback,
  toExceptionInfo,
} from '../../../src/queue/results/exceptions.js';

describe('toExceptionInfo', () => {
  it('maps Celery exceptions to the modules Python readers import them from', () => {
    expect(toExceptionInfo(new TimeLimitExceeded(5))).toEqual({
      exc_type: 'TimeLimitExceeded',
      exc_message: [5],
      exc_module: 'billiard.exceptions',
    });
    expect(toExceptionInfo(new NotRegistered('x.y'))).toEqual({
      exc_type: 'NotRegistered',
      exc_message: ['x.y'],
      exc_module: 'celery.exceptions',
    });
    expect(toExceptionInfo(new TaskRevokedError('revoked'))).toEqual({
      exc_type: 'TaskRevokedError',
      exc_message: ['revoked'],
      exc_module: 'celery.exceptions',
    });
    expect(toExceptionInfo(new PythonException('KeyError', ['k']))).toEqual({
      exc_type: 'KeyError',
      exc_message: ['k'],
      exc_module: 'builtins',
    });
  });

  it('maps JS errors: Error → Exception, Python built-in names kept, others to a module Python never loads', () => {
    expect(toExceptionInfo(new Error('boom'))).toEqual({ exc_type: 'Exception', exc_message: ['boom'], exc_module: 'builtins' });
    expect(toExceptionInfo(new TypeError('t'))).toEqual({ exc_type: 'TypeError', exc_message: ['t'], exc_module: 'builtins' });
    expect(toExceptionInfo(new RangeError('r'))).toEqual({ exc_type: 'RangeError', exc_message: ['r'], exc_module: JS_EXCEPTION_MODULE });
    const odd = new Error('x');
    odd.name = 'os.system';
    expect(toExceptionInfo(odd).exc_type).toBe('os_system');
    expect(toExceptionInfo('plain string')).toEqual({ exc_type: 'Exception', exc_message: ['plain string'], exc_module: 'builtins' });
  });
});

describe('formatTraceback', () => {
  it('writes a Python-style traceback, oldest frame first, ending with Type: message', () => {
    const error = new Error('boom');
    error.stack = 'Error: boom\n    at inner (/app/tasks.ts:10:5)\n    at outer (/app/tasks.ts:20:3)\n    at /app/run.ts:1:1';
    expect(formatTraceback(error)).toBe(
      [
        'Traceback (most recent call last):',
        '  File "/app/run.ts", line 1, in <module>',
        '  File "/app/tasks.ts", line 20, in outer',
        '  File "/app/tasks.ts", line 10, in inner',
        'Exception: boom',
        '',
      ].join('\n'),
    );
  });
});
