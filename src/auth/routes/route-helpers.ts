/** Small pieces the auth routes share: the client's address and the kind of body. */
import type { Request } from 'express';

/** The client's address as express sees it: the socket's peer, or the client a trusted proxy names (TRUST_PROXY). */
export function clientAddress(req: Request): string {
  return req.ip ?? req.socket.remoteAddress ?? 'unknown';
}

/** True for an HTML form post (the login and logout pages), false for JSON and empty bodies. */
export function isFormPost(req: Request): boolean {
  return req.is('application/x-www-form-urlencoded') === 'application/x-www-form-urlencoded';
}
