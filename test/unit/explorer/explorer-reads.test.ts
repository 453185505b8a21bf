/**
 * The explorer's count: exact up to the cap, "more than" the cap beyond it, and "at least" what
 * the page showed when counting takes too long or runs out of query time. The documents layer is
 * a stand-in here that answers the count it is given (the real one is exercised by the
 * integration tests).
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { DatabaseError } from '../../../src/db/errors.js';
import type { DocumentService } from '../../../src/documents/document-service.js';
import { ANONYMOUS } from '../../../src/auth/principal.js';
import { COUNT_CAP, COUNT_WAIT_MS, ExplorerReads, type ExplorerReader } from '../../../src/explorer/explorer-reads.js';

/** A documents service whose collection reads count `count` (a number, a promise, or a failure). */
function readsCounting(count: () => Promise<number>): { reads: ExplorerReads; pipelines: unknown[] } {
  const pipelines: unknown[] = [];
  const documents = {
    readCollection: async (
      _p: unknown,
      _c: unknown,
      _t: unknown,
      read: { pipeline?: unknown },
      deliver: (rows: unknown) => Promise<unknown>,
    ) => {
      pipelines.push(read.pipeline);
      return deliver({ count: count(), open: () => undefined });
    },
  } as unknown as DocumentService;
  return { reads: new ExplorerReads(documents), pipelines };
}

const reader: ExplorerReader = {
  principal: ANONYMOUS,
  caller: { key: 'ip:test', streamed: false },
  target: { db: 'lab', col: 'samples', whenEmpty: async () => undefined },
};

afterEach(() => {
  vi.useRealTimers();
});

describe('ExplorerReads.total', () => {
  it('counts exactly up to the cap, with the cap as a $limit', async () => {
    const { reads, pipelines } = readsCounting(async () => 6_000);
    expect(await reads.total(reader, {}, 25)).toEqual({ exact: true, n: 6_000 });
    expect(pipelines).toEqual([[{ $limit: COUNT_CAP + 1 }]]);
  });

  it('says "more than" the cap beyond it', async () => {
    const { reads } = readsCounting(async () => COUNT_CAP + 1);
    expect(await reads.total(reader, {}, 25)).toEqual({ exact: false, n: COUNT_CAP, why: 'cap' });
  });

  it('stops waiting for a slow count and says "at least" what was seen', async () => {
    vi.useFakeTimers();
    const { reads } = readsCounting(() => new Promise<number>(() => undefined));
    const total = reads.total(reader, {}, 50);
    await vi.advanceTimersByTimeAsync(COUNT_WAIT_MS + 1);
    expect(await total).toEqual({ exact: false, n: 50, why: 'slow' });
  });

  it('says "at least" when the count runs out of query time, and passes other database failures on', async () => {
    const timedOut = readsCounting(async () => {
      throw new DatabaseError('query_timeout', 'too long');
    });
    expect(await timedOut.reads.total(reader, {}, 10)).toEqual({ exact: false, n: 10, why: 'slow' });
    const down = readsCounting(async () => {
      throw new DatabaseError('unavailable', 'down');
    });
    await expect(down.reads.total(reader, {}, 10)).rejects.toMatchObject({ kind: 'unavailable' });
  });
});
