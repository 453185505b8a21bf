/**
 * `POST /api/links/`: a signed link to a record read of the API (docs/api-behaviour.md, "Signed
 * links"), e.g. a CSV export a program without credentials (pandas.read_csv) can fetch. And the
 * request step that accepts such a link: it authenticates the request as the link's user, for that
 * exact path and query only, while the user's credentials are those the link was made under; that
 * user's permissions are checked again by the route, as for any request.
 */
import { Router, type RequestHandler } from 'express';
import { z } from 'zod';
import { isAuthenticated, type Principal } from '../auth/principal.js';
import type { LinkHolder } from '../auth/module.js';
import { badRequest, forbidden, unauthenticated } from '../errors.js';
import { requestBaseUrl } from '../http/base-url.js';
import { COMMON, ERRORS, jsonBody, ok } from '../http/openapi-parts.js';
import { route, serve } from '../http/route-table.js';
import { respond } from '../http/respond.js';
import { canonicalPathAndQuery, LINK_PARAM, withLinkParam, withoutLinkParam } from './link-path.js';
import { isLinkable, LINKABLE_DESCRIPTION, linkTarget, type LinkTarget } from './link-scope.js';
import { LinkSigner, linkNotValid } from './link-token.js';
import { urls } from '../http/urls.js';

export const DEFAULT_LINK_SECONDS = 3600;
export const MAX_LINK_SECONDS = 86_400;

export interface LinkDeps {
  secretKey: string;
  /** An active user with their credentials stamp, or null for an unknown or disabled one. */
  linkHolder(userId: string): Promise<LinkHolder | null>;
  /** Whether the principal may read the collection's records (the link's GET would check it again). */
  mayRead(principal: Principal, target: LinkTarget): boolean;
}

/** serve parses the body with this schema before the handler runs. */
const SECONDS = `an integer from 1 to ${MAX_LINK_SECONDS} seconds`;
const requestSchema = z
  .strictObject({
    path: z.string().min(1).max(8192),
    expires_in: z.number().int(SECONDS).min(1, SECONDS).max(MAX_LINK_SECONDS, SECONDS).default(DEFAULT_LINK_SECONDS),
  })
  .describe('an object {"path": string, "expires_in": seconds}');

/** The app's route table mounts these at /api/links. */
export const LINK_ROUTES = {
  links: route('/', {
    POST: {
      summary:
        "A signed link: one GET of the given record read (under /api/data_store/data/ or /api/catalog/data/), as the caller, until it expires or the caller's password or API token changes (for programs without credentials)",
      parameters: COMMON,
      request: jsonBody(requestSchema),
      responses: { 201: ok('{url, expires}'), ...ERRORS },
    },
  }),
};

/** The path and query of `raw`, normalised as a URL parser (and so a client) writes it; only API paths of this host. */
function linkablePath(raw: string, base: string): string {
  if (!raw.startsWith('/') || raw.startsWith('//'))
    throw badRequest('invalid_path', `The path must start with "${urls.root()}" (no scheme or host).`);
  let url: URL;
  try {
    url = new URL(raw, base);
  } catch {
    throw badRequest('invalid_path', 'The path is not a valid URL path.');
  }
  if (!url.pathname.startsWith(urls.root())) throw badRequest('invalid_path', `Links can only be made to paths under ${urls.root()}.`);
  if (url.hash !== '') throw badRequest('invalid_path', 'The path must not have a #fragment.');
  if (url.searchParams.has(LINK_PARAM)) throw badRequest('invalid_path', `The path must not carry a "${LINK_PARAM}" parameter.`);
  const path = url.pathname + url.search;
  if (!isLinkable(path)) throw badRequest('invalid_path', `Links can only be made to reads of records: ${LINKABLE_DESCRIPTION}.`);
  return path;
}

export function linksRouter(deps: LinkDeps): Router {
  const signer = new LinkSigner(deps.secretKey);
  const router = Router({ strict: true });
  serve(router, LINK_ROUTES.links, {
    POST: async (req, res) => {
      if (!isAuthenticated(req.principal)) throw unauthenticated();
      // A link passes on the caller's rights to whoever holds it; a link must not mint more links.
      if (req.principal.authMethod === 'link') throw forbidden('A signed link cannot be used to make other links.');
      const body = req.body as z.output<typeof requestSchema>;
      const base = requestBaseUrl(req);
      const path = linkablePath(body.path, base);
      // A link to what its maker may not read would be refused when used; refuse to make it, so a
      // link in hand means a readable path.
      const target = linkTarget(path);
      if (target !== undefined && !deps.mayRead(req.principal, target)) throw forbidden('You may not read the records this link is for.');
      const userId = req.principal.userId as string;
      const holder = await deps.linkHolder(userId);
      if (holder === null) throw unauthenticated();
      const { token, expires } = signer.sign({ userId, path, credentials: holder.credentials }, body.expires_in);
      respond(req, res, 201, { url: new URL(withLinkParam(path, token), base).toString(), expires: expires.toISOString() });
    },
  });
  return router;
}

/**
 * Accepts `?link=<token>`: only for GET and HEAD, only for the path and query it was made for, only
 * for record reads (also for a link made when more was allowed), and only while its user has the
 * credentials it was made under. The parameter is then removed from the request's parameters, so
 * routes never see it.
 */
export function linkAuthentication(deps: LinkDeps): RequestHandler {
  const signer = new LinkSigner(deps.secretKey);
  return (req, _res, next) => {
    const token = req.query[LINK_PARAM];
    if (token === undefined) return next();
    const run = async (): Promise<void> => {
      if (typeof token !== 'string') throw badRequest('repeated_parameter', `The "${LINK_PARAM}" parameter is given more than once.`);
      const grant = signer.verify(token);
      if (req.method !== 'GET' && req.method !== 'HEAD') throw forbidden('A signed link only allows reading (GET).', 'link_not_allowed');
      if (canonicalPathAndQuery(withoutLinkParam(req.originalUrl)) !== canonicalPathAndQuery(grant.path))
        throw forbidden('This link was made for another path or query.', 'link_not_allowed');
      if (!isLinkable(grant.path))
        throw forbidden(`A signed link only allows reads of records: ${LINKABLE_DESCRIPTION}.`, 'link_not_allowed');
      const holder = await deps.linkHolder(grant.userId);
      if (holder === null) throw linkNotValid('The user of this link no longer exists or is disabled.');
      if (holder.credentials !== grant.credentials)
        throw linkNotValid("The link's user has changed their password or API token, or was disabled, since it was made.");
      req.principal = holder.principal;
      delete req.query[LINK_PARAM];
    };
    run().then(() => next(), next);
  };
}
