/**
 * ALLOWED_HOSTS, Django style: exact names, `*` for any host, and `.example.org` for the domain
 * and all its subdomains. Checked before anything else runs, so a forged Host header can never
 * reach a link builder or a password-reset style feature.
 */
import type { RequestHandler } from 'express';
import { badRequest } from '../errors.js';

export function hostWithoutPort(host: string): string {
  const h = host.trim().toLowerCase();
  if (h.startsWith('[')) {
    const end = h.indexOf(']');
    return end === -1 ? h : h.slice(0, end + 1);
  }
  const colon = h.lastIndexOf(':');
  return colon === -1 ? h : h.slice(0, colon);
}

/**
 * A Host header is a name (or an IPv4 address, or an IPv6 address in brackets) with an optional
 * numeric port: anything else cannot form a URL, and the link builders would throw on it.
 */
const HOST_HEADER = /^(?:[a-z0-9](?:[a-z0-9-]*[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]*[a-z0-9])?)*\.?|\[[0-9a-f:.]+\])(?::(\d{1,5}))?$/i;

export function isValidHostHeader(host: string): boolean {
  const syntax = HOST_HEADER.exec(host);
  return syntax !== null && (syntax[1] === undefined || Number(syntax[1]) <= 65535);
}

export function isHostAllowed(host: string | undefined, allowed: readonly string[]): boolean {
  if (host === undefined || host.length === 0 || !isValidHostHeader(host)) return false;
  const name = hostWithoutPort(host).replace(/\.$/, '');
  return allowed.some((pattern) => {
    const p = pattern.toLowerCase();
    if (p === '*') return true;
    if (p.startsWith('.')) return name === p.slice(1) || name.endsWith(p);
    return name === p;
  });
}

export function allowedHosts(allowed: readonly string[]): RequestHandler {
  return (req, _res, next) => {
    if (isHostAllowed(req.headers.host, allowed)) return next();
    next(badRequest('disallowed_host', 'The Host header of this request is not in ALLOWED_HOSTS.'));
  };
}
