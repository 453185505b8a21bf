import { ApiError } from '../../../src/errors.js';

/** Runs `fn`, expecting it to throw an ApiError, and returns that error for assertions. */
export function apiError(fn: () => unknown): ApiError {
  try {
    fn();
  } catch (err) {
    if (err instanceof ApiError) return err;
    throw err;
  }
  throw new Error('expected an ApiError to be thrown, but the call returned normally');
}
