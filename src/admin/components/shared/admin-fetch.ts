/**
 * Requests from the admin site's own pages to its JSON routes (/api/admin/...), and the message
 * to show when one fails. Runs in the browser, bundled with the components.
 */

/** An error answer of the API: `{"error": {"code": ..., "message": ...}}`. */
interface ErrorBody {
  error?: { message?: string };
}

/** The admin session's CSRF token, which every write must echo in its X-XSRF-TOKEN header. */
export function csrfToken(): string {
  const match = document.cookie.split('; ').find((c) => c.startsWith('XSRF-TOKEN='));
  return match ? decodeURIComponent(match.slice('XSRF-TOKEN='.length)) : '';
}

/** The answer's JSON body; a failed answer throws its error message (or its HTTP status). */
export async function readJson<T>(response: Response): Promise<T> {
  const body = (await response.json().catch(() => null)) as unknown;
  if (!response.ok) throw new Error((body as ErrorBody | null)?.error?.message || `HTTP ${response.status}`);
  return body as T;
}

/**
 * What to show for a failed request: the API's own message when the answer carried one (an
 * AdminJS ApiClient call fails with the answer attached), else the error's message.
 */
export function errorMessage(e: unknown): string {
  const failure = e as { message?: unknown; response?: { data?: { error?: { message?: unknown } } } } | null | undefined;
  const sent = failure?.response?.data?.error?.message;
  if (typeof sent === 'string' && sent !== '') return sent;
  return typeof failure?.message === 'string' && failure.message !== '' ? failure.message : String(e);
}
