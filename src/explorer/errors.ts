/** The explorer's own refusals: a view URL it cannot read. Permission and storage errors are the documents layer's. */
import { badRequest, type ApiError } from '../errors.js';

export const invalidView = (message: string): ApiError => badRequest('invalid_view', message);
