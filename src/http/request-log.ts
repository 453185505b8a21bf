/** Request ids and one access-log line per request (never headers, cookies or bodies). */
import { randomUUID } from 'node:crypto';
import type { RequestHandler } from 'express';
import { fixedFieldsLogger, type Logger } from '../log/logger.js';

const INCOMING_ID = /^[A-Za-z0-9._-]{1,64}$/;

export function requestLog(logger: Logger): RequestHandler {
  // The line's fields are the ones below and nothing else: none can hold a secret.
  const accessLog = fixedFieldsLogger(logger);
  return (req, res, next) => {
    const incoming = req.headers['x-request-id'];
    req.requestId = typeof incoming === 'string' && INCOMING_ID.test(incoming) ? incoming : randomUUID();
    res.setHeader('X-Request-Id', req.requestId);
    // Nothing to build or listen for when the access log is off (LOG_LEVEL above info).
    if (!logger.isLevelEnabled('info')) return next();
    const started = process.hrtime.bigint();
    res.on('finish', () => {
      const ms = Number(process.hrtime.bigint() - started) / 1e6;
      accessLog.info(
        {
          reqId: req.requestId,
          method: req.method,
          path: req.originalUrl.split('?')[0],
          status: res.statusCode,
          ms: Math.round(ms * 10) / 10,
          user: req.principal?.username ?? null,
        },
        'request',
      );
    });
    next();
  };
}
