/**
 * Request timing for the HTTP metric, kept cheap because it runs on every request: one clock
 * read at the start, one at the end, and label strings and child series looked up in caches
 * instead of built per request.
 *
 * The route label needs the pattern a request matched together with the mount path of the
 * router that matched it. Both are right only at the moment express picks the route: once a
 * handler passes an error on, express restores the mount path and the error handler answers
 * from the top level. So the app's request prototype records the route and the mount path
 * when express assigns `req.route` (an accessor, defined once, instead of per-request work).
 */
import type { Express, Request, RequestHandler } from 'express';
import type { Histogram } from 'prom-client';
import { BoundedLabel, UNMATCHED_ROUTE, methodLabel, routeTemplate, statusLabel } from './labels.js';

const ROUTE = Symbol('metrics.route');
const MOUNT = Symbol('metrics.mountPath');

interface MatchedRoute {
  path: unknown;
}

interface Tracked {
  [ROUTE]?: MatchedRoute;
  [MOUNT]?: string;
}

/** Makes every request of `app` remember the route that handles it and where it was mounted. */
export function recordRouteTemplates(app: Express): void {
  Object.defineProperty(app.request, 'route', {
    configurable: true,
    get(this: Tracked) {
      return this[ROUTE];
    },
    set(this: Tracked & Request, route: MatchedRoute) {
      this[ROUTE] = route;
      this[MOUNT] = this.baseUrl;
    },
  });
}

/** Mount paths remembered per route at most (routers here are mounted on fixed paths). */
const MOUNTS_PER_ROUTE = 8;

/** Route patterns joined with their mount paths, computed once per route and mount. */
class RouteTemplates {
  private readonly byRoute = new WeakMap<MatchedRoute, Map<string, string>>();

  of(route: MatchedRoute, mountPath: string): string {
    let mounts = this.byRoute.get(route);
    const known = mounts?.get(mountPath);
    if (known !== undefined) return known;
    const template = routeTemplate(mountPath, route.path);
    if (mounts === undefined) this.byRoute.set(route, (mounts = new Map()));
    if (mounts.size < MOUNTS_PER_ROUTE) mounts.set(mountPath, template);
    return template;
  }
}

const templates = new RouteTemplates();

/** The route label of a finished request. */
export function routeLabelOf(req: Request): string {
  const tracked = req as Tracked;
  const recorded = tracked[ROUTE];
  if (recorded !== undefined) return templates.of(recorded, tracked[MOUNT] ?? '');
  // Mounted sub-applications (the admin site) have request prototypes of their own.
  const route = req.route as MatchedRoute | undefined;
  return route === undefined ? UNMATCHED_ROUTE : templates.of(route, req.baseUrl);
}

/** At most this many route patterns; the app has a few dozen. */
const ROUTE_LIMIT = 300;

type Child = { observe(value: number): void };

/**
 * The histogram's child series by route label, method and status, in nested maps: finding the
 * series of a request builds no string and hashes no label set. Methods are those Node's HTTP
 * parser accepts and statuses are numbers, so the maps stay small.
 */
class RequestSeries {
  private readonly routes = new BoundedLabel(ROUTE_LIMIT);
  private readonly byRoute = new Map<string, Map<string, Map<number, Child>>>();

  constructor(private readonly histogram: Histogram<'route' | 'method' | 'status'>) {}

  observe(req: Request, status: number, seconds: number): void {
    const route = this.routes.label(routeLabelOf(req));
    let byMethod = this.byRoute.get(route);
    if (byMethod === undefined) this.byRoute.set(route, (byMethod = new Map()));
    let byStatus = byMethod.get(req.method);
    if (byStatus === undefined) byMethod.set(req.method, (byStatus = new Map()));
    let child = byStatus.get(status);
    if (child === undefined) {
      child = this.histogram.labels({ route, method: methodLabel(req.method), status: statusLabel(status) });
      byStatus.set(status, child);
    }
    child.observe(seconds);
  }
}

export function httpMetrics(histogram: Histogram<'route' | 'method' | 'status'>): RequestHandler {
  const series = new RequestSeries(histogram);
  return (req, res, next) => {
    // Added here, where every request has the same shape, so the `req.route` accessor only
    // overwrites them: adding properties to a request later costs several times more.
    (req as Tracked)[ROUTE] = undefined;
    (req as Tracked)[MOUNT] = undefined;
    const start = performance.now();
    // 'close' also comes for a client that hung up; the status is then what was set so far.
    res.on('close', () => series.observe(req, res.statusCode, (performance.now() - start) / 1000));
    next();
  };
}
