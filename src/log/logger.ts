/** Structured JSON logs. Secrets are redacted by path so a careless log call cannot leak them. */
import { pino, type Logger } from 'pino';

export type { Logger };

export const REDACTED_PATHS = [
  'req.headers.authorization',
  'req.headers.cookie',
  'req.headers["x-csrftoken"]',
  'res.headers["set-cookie"]',
  'password',
  '*.password',
  'token',
  '*.token',
  'secret',
  '*.secret',
  'access',
  'refresh',
];

export function createLogger(level: string, name = 'cybercom'): Logger {
  return pino({
    name,
    level,
    redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
    base: { pid: process.pid },
    timestamp: pino.stdTimeFunctions.isoTime,
  });
}
