/**
 * Exceptions as Celery's result backend stores them: `{exc_type, exc_message, exc_module}`,
 * where `exc_message` is the Python exception's `args` tuple. Python readers rebuild the class
 * from `exc_module` + `exc_type` (looked up in `sys.modules`; unknown names become synthetic
 * exceptions, names that resolve to a non-exception raise SecurityError).
 */
import { isJsonObject, type JsonValue } from '../protocol/json.js';
import { toJsonValue } from '../protocol/python-json.js';
import { pythonRepr } from '../protocol/python-repr.js';

export interface CeleryExceptionInfo {
  exc_type: string;
  exc_message: JsonValue[];
  exc_module: string;
}

/** An error that knows its Python identity; throw subclasses of it from tasks for precise types. */
export class PythonException extends Error {
  readonly excType: string;
  readonly excModule: string;
  readonly excArgs: JsonValue[];

  constructor(excType: string, excArgs: JsonValue[], excModule = 'builtins') {
    super(excArgs.map((a) => (typeof a === 'string' ? a : JSON.stringify(a))).join(', '));
    this.name = excType;
    this.excType = excType;
    this.excModule = excModule;
    this.excArgs = excArgs;
  }
}

/** Hard time limit hit (Celery raises billiard's TimeLimitExceeded with the limit as argument). */
export class TimeLimitExceeded extends PythonException {
  constructor(seconds: number) {
    super('TimeLimitExceeded', [seconds], 'billiard.exceptions');
  }
}

/** Soft time limit: the task is asked to stop (its AbortSignal fires) and may clean up. */
export class SoftTimeLimitExceeded extends PythonException {
  constructor(seconds: number) {
    super('SoftTimeLimitExceeded', [seconds], 'billiard.exceptions');
  }
}

export type RevokeReason = 'revoked' | 'expired' | 'terminated';

export class TaskRevokedError extends PythonException {
  constructor(readonly reason: RevokeReason) {
    super('TaskRevokedError', [reason], 'celery.exceptions');
  }
}

export class NotRegistered extends PythonException {
  constructor(taskName: string) {
    super('NotRegistered', [taskName], 'celery.exceptions');
  }
}

/** Built-in Python exception names a JS error may carry unchanged. */
const PYTHON_BUILTIN_EXCEPTIONS = new Set([
  'Exception',
  'ArithmeticError',
  'AssertionError',
  'AttributeError',
  'ConnectionError',
  'EOFError',
  'FileExistsError',
  'FileNotFoundError',
  'IndexError',
  'KeyError',
  'LookupError',
  'MemoryError',
  'NotImplementedError',
  'OSError',
  'OverflowError',
  'PermissionError',
  'RecursionError',
  'RuntimeError',
  'TimeoutError',
  'TypeError',
  'ValueError',
  'ZeroDivisionError',
]);

/**
 * Module named for other JS errors. It is never loaded in a Python process, so readers turn the
 * name into a synthetic exception class instead of resolving it to an unrelated object.
 */
export const JS_EXCEPTION_MODULE = 'cybercom_ts.exceptions';

export function toExceptionInfo(error: unknown): CeleryExceptionInfo {
  if (error instanceof PythonException) {
    return { exc_type: error.excType, exc_message: error.excArgs, exc_module: error.excModule };
  }
  if (error instanceof Error) {
    // JS `Error` plays the role of Python's `Exception`.
    const name = error.name === 'Error' ? 'Exception' : pythonIdentifier(error.name);
    return {
      exc_type: name,
      exc_message: [error.message],
      exc_module: PYTHON_BUILTIN_EXCEPTIONS.has(name) ? 'builtins' : JS_EXCEPTION_MODULE,
    };
  }
  return { exc_type: 'Exception', exc_message: [toJsonValue(error)], exc_module: 'builtins' };
}

/** Dots would be read as nested attribute lookups by Python readers. */
function pythonIdentifier(name: string): string {
  const cleaned = name.replace(/[^A-Za-z0-9_]/g, '_');
  return /^[A-Za-z_]/.test(cleaned) ? cleaned : `E_${cleaned}`;
}

export function isExceptionInfo(value: unknown): value is CeleryExceptionInfo {
  return isJsonObject(value) && typeof value.exc_type === 'string';
}

/** Human-readable `Type: message` (what Python prints for the exception). */
export function describeException(info: CeleryExceptionInfo): string {
  const parts = Array.isArray(info.exc_message) ? info.exc_message : [info.exc_message as JsonValue];
  const text = parts.map((p) => (typeof p === 'string' ? p : JSON.stringify(p))).join(', ');
  return text ? `${info.exc_type}: ${text}` : info.exc_type;
}

/** Python repr of the exception, e.g. `ValueError('bad input')` (what Celery events carry). */
export function exceptionRepr(info: CeleryExceptionInfo): string {
  return `${info.exc_type}(${info.exc_message.map((arg) => pythonRepr(arg)).join(', ')})`;
}

/**
 * A Python-style traceback text from a JS stack: Python tooling and people reading Celery
 * results expect `Traceback (most recent call last):`, frames oldest first, then `Type: message`.
 */
export function formatTraceback(error: unknown): string {
  const info = toExceptionInfo(error);
  const stack = error instanceof Error && typeof error.stack === 'string' ? error.stack : '';
  const frames = stack
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line.startsWith('at '))
    .map(frameLine)
    .reverse();
  return ['Traceback (most recent call last):', ...frames, `${describeException(info)}`].join('\n') + '\n';
}

function frameLine(line: string): string {
  const m = /^at (?:(.+?) \()?(.+?):(\d+):\d+\)?$/.exec(line);
  if (m === null) return `  ${line}`;
  const [, fn = '<module>', file = '?', lineNo = '0'] = m;
  return `  File "${file}", line ${lineNo}, in ${fn}`;
}
