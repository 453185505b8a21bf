/**
 * Lists what an express app really serves by walking its router stack (express 4's layers): each
 * route as its full path pattern and the methods it answers. It reads only what express keeps, so
 * it finds a route however it was mounted, and knows nothing of the service's route table.
 */
import type { Express } from 'express';

export interface MountedRoute {
  /** An HTTP method, or `USE` for a router that has only middleware (it serves a whole tree). */
  method: string;
  /** The full express pattern, e.g. `/api/data_store/data/:db/:col/`. */
  path: string;
}

interface Layer {
  regexp: RegExp & { fast_slash?: boolean };
  keys: { name: string | number }[];
  route?: { path: unknown; methods: Record<string, boolean>; stack: { handle: { methods?: readonly string[] } }[] };
  handle: { stack?: Layer[] };
}

/** The literal prefix a `use` layer was mounted at (path-to-regexp 0.1's output read back). */
function mountPathOf(layer: Layer): string {
  if (layer.regexp.fast_slash === true) return '';
  let key = 0;
  const path = layer.regexp.source
    .replace(/^\^/, '')
    .replace(/\\\/\?\(\?=\\\/\|\$\)$/, '')
    .replace(/\(\?:\(\[\^\\\/\]\+\?\)\)/g, () => `:${String(layer.keys[key++]?.name)}`)
    .replace(/\\(.)/g, '$1');
  if (/[()[\]?*+^$|]/.test(path)) throw new Error(`A mount path this walker cannot read: ${layer.regexp.source}`);
  return path;
}

function walk(stack: Layer[], prefix: string, out: MountedRoute[]): void {
  for (const layer of stack) {
    if (layer.route !== undefined) {
      const paths = Array.isArray(layer.route.path) ? layer.route.path : [layer.route.path];
      const verbs = new Set(
        Object.keys(layer.route.methods)
          .filter((m) => m !== '_all')
          .map((m) => m.toUpperCase()),
      );
      // `router.all(path, ..., methods({...}))`: the methods() handler names what it serves.
      for (const { handle } of layer.route.stack) for (const m of handle.methods ?? []) verbs.add(m);
      for (const path of paths) {
        if (typeof path !== 'string') throw new Error(`A route whose path is not a string under ${prefix}`);
        for (const method of verbs) if (method !== 'HEAD' && method !== 'OPTIONS') out.push({ method, path: prefix + path });
      }
    } else if (Array.isArray(layer.handle.stack)) {
      const before = out.length;
      walk(layer.handle.stack, prefix + mountPathOf(layer), out);
      // A router of middleware only (a static site) still serves its path: `USE` says so.
      if (out.length === before && layer.handle.stack.length > 0) out.push({ method: 'USE', path: prefix + mountPathOf(layer) });
    }
  }
}

export function mountedRoutes(app: Express): MountedRoute[] {
  const out: MountedRoute[] = [];
  walk((app as unknown as { _router: { stack: Layer[] } })._router.stack, '', out);
  return out;
}
