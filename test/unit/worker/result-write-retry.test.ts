/** Which result-write failures are retried, and how a shutdown cuts a retry short. */
import { BSON, MongoInvalidArgumentError, MongoNetworkError, MongoServerError, MongoServerSelectionError } from 'mongodb';
import { describe, expect, it } from 'vitest';
import { isTransientWriteError } from '../../../src/queue/results/write-errors.js';
import { OperationAborted, abortable, retrying, sharedAbortController } from '../../../src/worker/service-retry.js';
import { truncatedRepr, unstorableOutcome } from '../../../src/worker/request/unstorable-result.js';

const serverError = (code: number, errmsg = 'refused'): MongoServerError => new MongoServerError({ code, errmsg, ok: 0 });

describe('isTransientWriteError', () => {
  it('retries outages, restarts and upsert races', () => {
    expect(isTransientWriteError(new MongoNetworkError('connection reset'))).toBe(true);
    expect(isTransientWriteError(new MongoServerSelectionError('no server', { type: 'Unknown' } as never))).toBe(true);
    expect(isTransientWriteError(serverError(1))).toBe(true); // InternalError: the engine's storage is down
    expect(isTransientWriteError(serverError(91))).toBe(true); // ShutdownInProgress
    expect(isTransientWriteError(serverError(11000))).toBe(true); // two upserts raced
  });

  it('gives up at once on refusals of the document itself', () => {
    expect(isTransientWriteError(serverError(10334, 'BSONObj size is invalid'))).toBe(false);
    expect(isTransientWriteError(serverError(2, 'bad key'))).toBe(false);
    expect(isTransientWriteError(new BSON.BSONError('key must not contain null bytes'))).toBe(false);
    expect(isTransientWriteError(new MongoInvalidArgumentError('Document is larger than the maximum size'))).toBe(false);
    expect(isTransientWriteError(new TypeError('cannot serialize a BigInt'))).toBe(false);
  });
});

describe('retrying', () => {
  it('rethrows a permanent error after one attempt', async () => {
    let attempts = 0;
    const error = await retrying(
      () => {
        attempts++;
        return Promise.reject(serverError(10334));
      },
      { deadlineMs: 10_000, initialDelayMs: 1, retryIf: isTransientWriteError },
    ).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(MongoServerError);
    expect(attempts).toBe(1);
  });

  it('stops waiting, even for an attempt under way, when its signal fires', async () => {
    const controller = new AbortController();
    const started = Date.now();
    setTimeout(() => controller.abort(), 50);
    const error = await retrying(() => abortable(new Promise<never>(() => undefined), controller.signal), {
      deadlineMs: 60_000,
      signal: controller.signal,
    }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OperationAborted);
    expect(Date.now() - started).toBeLessThan(1_000);
  });
});

describe('sharedAbortController', () => {
  /** Starts `count` waits on `signal` that never settle by themselves; resolves with the warnings emitted meanwhile. */
  async function warningsWhileWaiting(signal: AbortSignal, count: number): Promise<string[]> {
    const warnings: string[] = [];
    const onWarning = (warning: Error): void => {
      warnings.push(warning.name);
    };
    process.on('warning', onWarning);
    try {
      for (let i = 0; i < count; i++) void abortable(new Promise<never>(() => undefined), signal).catch(() => undefined);
      // Node emits the warning on a later tick.
      await new Promise((r) => setImmediate(r));
      return warnings;
    } finally {
      process.off('warning', onWarning);
    }
  }

  it('lets as many operations wait on its signal as a worker has in flight, without a leak warning', async () => {
    const plain = new AbortController();
    expect(await warningsWhileWaiting(plain.signal, 32)).toContain('MaxListenersExceededWarning');
    plain.abort();
    const shared = sharedAbortController();
    expect(await warningsWhileWaiting(shared.signal, 32)).toEqual([]);
    shared.abort();
  });
});

describe('unstorableOutcome', () => {
  it('is an EncodeError naming the reason and the start of the refused value', () => {
    const info = unstorableOutcome(serverError(10334, 'document is too large'), 'result', `'${'x'.repeat(5_000)}'`);
    expect(info).toMatchObject({ exc_type: 'EncodeError', exc_module: 'kombu.exceptions' });
    expect(info.exc_message[0]).toMatch(
      /^the task's result could not be stored \(the database refused the document: document is too large\): 'xxx/,
    );
    expect(info.exc_message[0]).toMatch(/\(5002 characters in all\)$/);
    expect(truncatedRepr('short')).toBe('short');
  });
});
