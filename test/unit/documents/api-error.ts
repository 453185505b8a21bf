import { ApiError } from '../../../src/errors.js';
import { DocumentError } from '../../../src/documents/errors.js';
import { documentApiError } from '../../../src/app/error-handler.js';

/**
 * An error thrown by the documents layer as the caller is answered: an ApiError as it is, a
 * DocumentError as the error handler maps it (404, 409 or 400 by its kind).
 */
export function asAnswer(err: unknown): ApiError {
  if (err instanceof ApiError) return err;
  if (err instanceof DocumentError) return documentApiError(err);
  throw err;
}

/** Runs `fn`, expecting it to throw an ApiError or a DocumentError, and returns the answer it makes. */
export function apiError(fn: () => unknown): ApiError {
  try {
    fn();
  } catch (err) {
    return asAnswer(err);
  }
  throw new Error('expected an ApiError to be thrown, but the call returned normally');
}
