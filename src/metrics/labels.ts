/**
 * Label values of the HTTP and task metrics. Every value comes from a bounded set, so a caller
 * cannot grow the number of series: routes are the code's own route patterns (never the raw
 * path), methods and statuses are from fixed lists, task names only those the workers register.
 */
export const UNMATCHED_ROUTE = '<unmatched>';
export const OTHER = '<other>';

const METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);

export const methodLabel = (method: string): string => (METHODS.has(method) ? method : OTHER);

export const statusLabel = (status: number): string =>
  Number.isInteger(status) && status >= 100 && status <= 599 ? String(status) : OTHER;

/**
 * The route pattern a request matched: the mount path of its router (`baseUrl`, literal: routers
 * here are mounted on fixed paths) joined with the route's own pattern. Patterns that are not
 * strings (regular expressions, arrays) are code too and print boundedly.
 */
export function routeTemplate(baseUrl: string, path: unknown): string {
  if (typeof path === 'string') return `${baseUrl}${path}`;
  if (Array.isArray(path)) return `${baseUrl}${path.map(String).join('|')}`;
  if (path instanceof RegExp) return `${baseUrl}${path.source}`;
  return UNMATCHED_ROUTE;
}

/**
 * Admits label values until `limit` distinct ones were seen, then answers OTHER for new ones: a
 * safety net behind the rules above (a route set that grows at run time, a cluster with
 * hundreds of task names) so one mistake cannot flood the time-series database.
 */
export class BoundedLabel {
  private readonly seen = new Set<string>();
  constructor(private readonly limit: number) {}

  label(value: string): string {
    if (this.seen.has(value)) return value;
    if (this.seen.size >= this.limit) return OTHER;
    this.seen.add(value);
    return value;
  }
}
