/**
 * The access log's logger skips pino's redaction pass (src/log/logger.ts, fixedFieldsLogger):
 * its lines must come out as the redacting logger writes them, with the same bindings and level,
 * and the redacting logger it is made from must go on redacting.
 */
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { fixedFieldsLogger, REDACTED_PATHS, type Logger } from '../../../src/log/logger.js';

function captured(level = 'info'): { logger: Logger; lines: () => Record<string, unknown>[] } {
  const chunks: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      chunks.push(chunk.toString('utf8'));
      callback();
    },
  });
  // As createLogger's, with a fixed time so that two lines can be compared whole.
  const logger = pino(
    { name: 'cybercom', level, redact: { paths: REDACTED_PATHS, censor: '[redacted]' }, base: { pid: 1 }, timestamp: () => ',"time":"t"' },
    sink,
  );
  return {
    logger,
    lines: () =>
      chunks
        .join('')
        .split('\n')
        .filter((l) => l !== '')
        .map((l) => JSON.parse(l) as Record<string, unknown>),
  };
}

const ACCESS_LINE = { reqId: 'r-1', method: 'GET', path: '/api/data_store/data/a/b/', status: 200, ms: 1.5, user: 'logan' };

describe('fixedFieldsLogger', () => {
  it('writes an access line exactly as the redacting logger does', () => {
    const { logger, lines } = captured();
    logger.info(ACCESS_LINE, 'request');
    fixedFieldsLogger(logger).info(ACCESS_LINE, 'request');
    const [redacted, fixed] = lines();
    expect(fixed).toEqual(redacted);
    expect(fixed).toMatchObject({ name: 'cybercom', pid: 1, level: 30, msg: 'request', ...ACCESS_LINE });
  });

  it('keeps the level of the logger it is made from', () => {
    const { logger, lines } = captured('warn');
    fixedFieldsLogger(logger).info(ACCESS_LINE, 'request');
    expect(lines()).toEqual([]);
  });

  it('leaves the redacting logger redacting', () => {
    const { logger, lines } = captured();
    fixedFieldsLogger(logger);
    logger.info({ user: { password: 'hunter22' }, token: 'abc' }, 'login');
    const [line] = lines();
    expect(line).toMatchObject({ user: { password: '[redacted]' }, token: '[redacted]' });
  });
});
