/**
 * How a route is declared: its path under the router that serves it, the parser of its bodies,
 * and per method its OpenAPI operation (summary, query parameters, request body as a zod schema
 * or a JSON schema, responses). Each feature declares its routes once; its router mounts them
 * with `serve`, which refuses a handler set that differs from the declared methods, reads the
 * body with the declared parser and checks the query and the body against the declaration before
 * the handler runs. The app's route table places the routes under their mount paths, from which
 * the OpenAPI document and the API root are made: what the document shows is what is enforced.
 */
import type { RequestHandler, Router } from 'express';
import { readBody, type BodyParser } from './body.js';
import { chain } from './chain.js';
import { methods, type AsyncHandler } from './methods.js';
import type { Operation, Verb } from './operation.js';
import { checkDeclared } from './request-check.js';

export type { Answer, Operation, QueryParameter, Schema, Verb } from './operation.js';

export interface RouteDecl {
  /** The express pattern under the router's mount path, e.g. `/:db/:col/`. */
  readonly path: string;
  readonly operations: Readonly<Partial<Record<Verb, Operation>>>;
  /** The document's names of path parameters, where they differ from the pattern's (see PARAMETER_NAMES). */
  readonly params?: Readonly<Record<string, string>>;
  /** How its bodies are read (JSON.parse when not given). */
  readonly body?: BodyParser;
}

/** A router's routes and the path it is mounted at. */
export interface Mount {
  readonly prefix: string;
  readonly routes: readonly RouteDecl[];
}

/** Names the document gives pattern parameters everywhere (the patterns keep express's short names). */
const PARAMETER_NAMES: Readonly<Record<string, string>> = { db: 'database', col: 'collection' };

export function route(path: string, operations: RouteDecl['operations'], params?: RouteDecl['params'], body?: BodyParser): RouteDecl {
  return { path, operations, ...(params === undefined ? {} : { params }), ...(body === undefined ? {} : { body }) };
}

/** The document's names of the parameters of `path` (an express pattern), in order. */
export function parameterNames(decl: RouteDecl, path: string): { pattern: string; name: string }[] {
  return [...path.matchAll(/:([A-Za-z0-9_]+)/g)].map(([, pattern]) => ({
    pattern: pattern as string,
    name: decl.params?.[pattern as string] ?? PARAMETER_NAMES[pattern as string] ?? (pattern as string),
  }));
}

/** `path` (an express pattern) in the OpenAPI form: `/:db/` → `/{database}/`. */
export function openApiPath(decl: RouteDecl, path: string): string {
  const names = new Map(parameterNames(decl, path).map(({ pattern, name }) => [pattern, name]));
  return path.replace(/:([A-Za-z0-9_]+)/g, (_m, pattern: string) => `{${names.get(pattern) ?? pattern}}`);
}

/** The path of `decl` with its parameters filled in (each one encoded), for links to it. */
export function pathOf(decl: RouteDecl, values: Readonly<Record<string, string>> = {}): string {
  return decl.path.replace(/:([A-Za-z0-9_]+)/g, (_m, name: string) => {
    const value = values[name];
    if (value === undefined) throw new Error(`No value for ":${name}" of ${decl.path}`);
    return encodeURIComponent(value);
  });
}

/**
 * Mounts `decl` on `router`: the steps in `before`, the body read with the declared parser, the
 * query and body checked against the method's operation (an undeclared query parameter or body
 * field is a 400 naming it), then one handler per declared method (405 for the others). A
 * handler set that differs from the declaration is a programming error and is refused when the
 * router is built, so the document cannot list a method nobody serves.
 */
export function serve(
  router: Router,
  decl: RouteDecl,
  handlers: Readonly<Record<string, AsyncHandler>>,
  ...before: RequestHandler[]
): void {
  const declared = Object.keys(decl.operations).sort().join(', ');
  const given = Object.keys(handlers).sort().join(', ');
  if (declared !== given) throw new Error(`The route ${decl.path} declares ${declared} but is given handlers for ${given}.`);
  const dispatch = methods(handlers);
  // One layer for the route's steps (src/http/chain.ts), naming its methods as `methods` does.
  const steps = chain([...before, readBody(new Set(Object.keys(decl.operations)), decl.body), checkDeclared(decl.operations), dispatch]);
  router.all(decl.path, Object.assign(steps, { methods: dispatch.methods }));
}
