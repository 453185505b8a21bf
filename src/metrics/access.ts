/**
 * Who may read the metrics: never anonymous callers by default. Allowed are superusers, holders
 * of the `metrics_read` role (whatever way they authenticated: token, JWT or session), and
 * clients whose address is on METRICS_ALLOWED_IPS (a Prometheus server without credentials).
 * The address is the one express reports: the socket's peer, or with TRUST_PROXY the client the
 * reverse proxy names.
 */
import type { Principal } from '../auth/principal.js';
import { isAuthenticated } from '../auth/principal.js';
import { hasRole } from '../auth/permissions.js';
import { forbidden, unauthenticated } from '../errors.js';
import type { IpAllowList } from '../config/ip-allowlist.js';

export function checkMetricsAccess(principal: Principal, clientAddress: string | undefined, allowList: IpAllowList): void {
  if (allowList.allows(clientAddress)) return;
  if (!isAuthenticated(principal)) throw unauthenticated();
  if (!hasRole(principal, 'metrics_read')) throw forbidden('Reading the metrics needs the permission cybercom_queue.metrics_read.');
}
