/**
 * The error type of the request-facing areas (auth, documents, the queue API): a status and a
 * code callers see. The database and the broker layers, which the worker shares, raise their own
 * errors (DatabaseError, QueueUnavailableError) that name what failed, not a status. The handler
 * in src/app/error-handler.ts is the only place that maps any of them to a response body:
 *   {"error": {"status", "code", "message", "detail"?}}
 * Nothing here knows about express.
 */
export class ApiError extends Error {
  readonly status: number;
  readonly code: string;
  readonly detail: unknown;
  /** Extra response headers (e.g. WWW-Authenticate, Retry-After). */
  readonly headers: Record<string, string>;

  constructor(status: number, code: string, message: string, detail?: unknown, headers: Record<string, string> = {}) {
    super(message);
    this.name = 'ApiError';
    this.status = status;
    this.code = code;
    this.detail = detail;
    this.headers = headers;
  }

  toBody(): { error: { status: number; code: string; message: string; detail?: unknown } } {
    const error: { status: number; code: string; message: string; detail?: unknown } = {
      status: this.status,
      code: this.code,
      message: this.message,
    };
    if (this.detail !== undefined) error.detail = this.detail;
    return { error };
  }
}

export const badRequest = (code: string, message: string, detail?: unknown): ApiError => new ApiError(400, code, message, detail);

export const unauthenticated = (message = 'Authentication credentials were not provided.'): ApiError =>
  new ApiError(401, 'not_authenticated', message, undefined, { 'WWW-Authenticate': 'Token' });

export const forbidden = (message = 'You do not have permission to perform this action.', code = 'permission_denied'): ApiError =>
  new ApiError(403, code, message);

export const notFound = (message = 'Not found.', code = 'not_found'): ApiError => new ApiError(404, code, message);

export const methodNotAllowed = (method: string): ApiError =>
  new ApiError(405, 'method_not_allowed', `Method "${method}" is not allowed here.`);

export const conflict = (message: string, code = 'conflict', detail?: unknown): ApiError => new ApiError(409, code, message, detail);

export const payloadTooLarge = (message: string): ApiError => new ApiError(413, 'payload_too_large', message);

export const uriTooLong = (message: string): ApiError => new ApiError(414, 'query_too_long', message);

export const unsupportedMediaType = (message = 'Request body must be JSON (Content-Type: application/json).'): ApiError =>
  new ApiError(415, 'unsupported_media_type', message);

export const tooManyRequests = (message: string, retryAfterSeconds: number): ApiError =>
  new ApiError(429, 'throttled', message, undefined, { 'Retry-After': String(Math.max(1, Math.ceil(retryAfterSeconds))) });

export const unavailable = (message: string, code = 'service_unavailable', detail?: unknown): ApiError =>
  new ApiError(503, code, message, detail);

export const isApiError = (value: unknown): value is ApiError => value instanceof ApiError;
