/** The explorer's own refusals: a view URL it cannot read. Permission and storage errors are the documents layer's. */
import { badRequest, isApiError, type ApiError } from '../errors.js';
import { DocumentError } from '../documents/errors.js';

export const invalidView = (message: string): ApiError => badRequest('invalid_view', message);

/**
 * The words of a refusal of the view's query (a 400 of the query parsers, or the documents
 * layer's refusal, such as a `$near` without its index), shown beside the filter to fix; undefined
 * for any other error, which the service's error handler answers.
 */
export function queryRefusal(err: unknown): string | undefined {
  if (isApiError(err)) return err.status === 400 ? err.message : undefined;
  if (err instanceof DocumentError) return err.kind === 'refused' ? err.message : undefined;
  return undefined;
}
