/**
 * TRUST_PROXY: whose X-Forwarded-For (and -Proto, -Host) the API believes. The client address it
 * yields is what the login throttle counts failures by and what METRICS_ALLOW checks, so a header
 * from anyone but the proxy must not be believed: otherwise a client names a new address in every
 * request.
 * - `false` (the default): none; the address is the socket's peer.
 * - `true`: the peer, whoever it is, is one proxy hop. Only where nothing but the proxy can reach
 *   the API's port (the compose stack, where the API publishes none).
 * - a comma-separated list of addresses, CIDR ranges and the names `loopback`, `linklocal`,
 *   `uniquelocal`: only peers in it are proxies (and so is each hop of X-Forwarded-For that is in
 *   it); the client is the nearest address in the chain that is not.
 */
import { isIP } from 'node:net';
import { z } from 'zod';
import { parseBoolean } from './env-values.js';

/** What express's `trust proxy` is set to: off, one hop, or the proxies' addresses. */
export type TrustProxy = boolean | string[];

const NAMED_RANGES = new Set(['loopback', 'linklocal', 'uniquelocal']);

/** Why `entry` is no proxy address, CIDR range or range name; null when it is one. */
export function trustedProxyProblem(entry: string): string | null {
  if (NAMED_RANGES.has(entry)) return null;
  const [address = '', bits, ...rest] = entry.split('/');
  const family = isIP(address);
  if (family === 0 || rest.length > 0) return `"${entry}" is not an address, a CIDR range or one of ${[...NAMED_RANGES].join(', ')}`;
  if (bits === undefined) return null;
  const max = family === 4 ? 32 : 128;
  return /^\d{1,3}$/.test(bits) && Number(bits) <= max ? null : `"${entry}" has a prefix length outside 0-${max}`;
}

export function parseTrustProxy(text: string): TrustProxy | string {
  const flag = parseBoolean(text);
  if (flag !== undefined) return flag;
  const entries = text
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s.length > 0);
  if (entries.length === 0) return 'must be true, false or a list of proxy addresses';
  const problems = entries.map(trustedProxyProblem).filter((p): p is string => p !== null);
  return problems.length > 0 ? problems.join('; ') : entries;
}

/** The TRUST_PROXY setting (see the module comment). */
export const trustProxySetting = z.string().transform((text, ctx): TrustProxy => {
  const parsed = parseTrustProxy(text);
  if (typeof parsed === 'string') {
    ctx.addIssue({ code: 'custom', message: parsed });
    return z.NEVER;
  }
  return parsed;
});

/** The value of express's `trust proxy` setting for TRUST_PROXY. */
export function expressTrustProxy(trust: TrustProxy): number | false | string[] {
  return trust === true ? 1 : trust;
}
