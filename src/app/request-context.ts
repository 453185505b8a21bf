/** What the middleware chain learns about a request, typed once for every route. */
import type { Principal } from '../auth/principal.js';
import type { Format } from '../render/index.js';

declare global {
  // eslint-disable-next-line @typescript-eslint/no-namespace
  namespace Express {
    interface Request {
      /** Correlates log lines of one request; echoed in the X-Request-Id response header. */
      requestId: string;
      /** Output format from `?format=`, a `/.json`-style suffix, or the Accept header. */
      format: Format;
      principal: Principal;
      /** Absolute base URL (scheme + host) of this request, for links in responses. */
      baseUrl_: string;
    }
  }
}

export {};
