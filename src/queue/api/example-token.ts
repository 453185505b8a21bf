/**
 * The API token key in a task page's example curl line. Keys are stored hashed, so the service
 * cannot look one up: a caller who authenticated with `Authorization: Token <key>` gets that key
 * back (they sent it); everyone else (session, JWT) gets a placeholder, and their profile
 * (/api/user/) says how to get a new key.
 */
import type { Request } from 'express';
import { parseAuthorization } from '../../auth/authorization-header.js';

export const TOKEN_PLACEHOLDER = '<your API token>';

export function exampleTokenKey(req: Request): string {
  if (req.principal.authMethod !== 'token') return TOKEN_PLACEHOLDER;
  const { scheme, credentials } = parseAuthorization(req);
  return scheme === 'token' && credentials.length === 1 && credentials[0] !== undefined ? credentials[0] : TOKEN_PLACEHOLDER;
}
