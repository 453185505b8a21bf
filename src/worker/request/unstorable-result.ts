/**
 * The FAILURE a worker stores in place of an outcome the database refuses for good (a result
 * too large, a value it cannot encode). Celery does the same when it cannot serialise a
 * return value: it records kombu's EncodeError, naming the reason, instead of the value.
 */
import type { CeleryExceptionInfo } from '../../queue/results/exceptions.js';
import { toExceptionInfo } from '../../queue/results/exceptions.js';
import { describeWriteRefusal } from '../../queue/results/write-errors.js';
import { EncodeError } from './task-execution.js';

/** Enough of the value to recognise it; the whole of it is what could not be stored. */
const REPR_LIMIT = 1_000;

export function truncatedRepr(repr: string, limit = REPR_LIMIT): string {
  if (repr.length <= limit) return repr;
  return `${repr.slice(0, limit)}... (${repr.length} characters in all)`;
}

/** `what`: the outcome that was refused ("result", "exception", "revocation"); `repr`: its Python repr. */
export function unstorableOutcome(error: unknown, what: string, repr: string): CeleryExceptionInfo {
  return toExceptionInfo(
    new EncodeError(`the task's ${what} could not be stored (${describeWriteRefusal(error)}): ${truncatedRepr(repr)}`),
  );
}
