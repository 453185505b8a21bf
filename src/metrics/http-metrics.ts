/**
 * Request timing for the HTTP metric, kept cheap because it runs on every request: one clock
 * read at the start, one at the end, and a cached child series per label combination (no
 * label hashing per request).
 *
 * The route label needs the pattern a request matched together with the mount path of the
 * router that matched it. Both are right only at the moment express picks the route: once a
 * handler passes an error on, express restores the mount path and the error handler answers
 * from the top level. So the app's request prototype records the pattern when express assigns
 * `req.route` (an accessor, defined once, instead of per-request work).
 */
import type { Express, Request, RequestHandler } from 'express';
import type { Histogram } from 'prom-client';
import { BoundedLabel, UNMATCHED_ROUTE, methodLabel, routeTemplate, statusLabel } from './labels.js';

const TEMPLATE = Symbol('metrics.routeTemplate');
const ROUTE = Symbol('metrics.route');

interface Tracked {
  [TEMPLATE]?: string;
  [ROUTE]?: { path: unknown };
}

/** Makes every request of `app` remember the pattern of the route that handles it. */
export function recordRouteTemplates(app: Express): void {
  Object.defineProperty(app.request, 'route', {
    configurable: true,
    get(this: Tracked) {
      return this[ROUTE];
    },
    set(this: Tracked & Request, route: { path: unknown }) {
      this[ROUTE] = route;
      this[TEMPLATE] = routeTemplate(this.baseUrl, route?.path);
    },
  });
}

/** The route label of a finished request. */
export function routeLabelOf(req: Request): string {
  const recorded = (req as Tracked)[TEMPLATE];
  if (recorded !== undefined) return recorded;
  // Mounted sub-applications (the admin site) have request prototypes of their own.
  const route = req.route as { path?: unknown } | undefined;
  return route === undefined ? UNMATCHED_ROUTE : routeTemplate(req.baseUrl, route.path);
}

/** At most this many route patterns; the app has a few dozen. */
const ROUTE_LIMIT = 300;

export function httpMetrics(histogram: Histogram<'route' | 'method' | 'status'>): RequestHandler {
  const routes = new BoundedLabel(ROUTE_LIMIT);
  const children = new Map<string, { observe(value: number): void }>();
  const child = (route: string, method: string, status: string) => {
    const key = `${route}\n${method}\n${status}`;
    let found = children.get(key);
    if (found === undefined) {
      found = histogram.labels({ route, method, status });
      children.set(key, found);
    }
    return found;
  };
  return (req, res, next) => {
    const start = performance.now();
    // 'close' also comes for a client that hung up; the status is then what was set so far.
    res.once('close', () => {
      child(routes.label(routeLabelOf(req)), methodLabel(req.method), statusLabel(res.statusCode)).observe(
        (performance.now() - start) / 1000,
      );
    });
    next();
  };
}
