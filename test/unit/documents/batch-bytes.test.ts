import { describe, expect, it } from 'vitest';
import { BatchBudget, BatchSizer, MIN_BATCH_BYTES, STREAM_BATCH_BUDGET } from '../../../src/documents/batch-bytes.js';

const MiB = 1024 * 1024;
/** The arguments of BatchSizer.next for `count` records of `bytes` each. */
const records = (count: number, bytes: number): [number, number] => [count, count * bytes];
/** A share that always allows `bytes`. */
const share = (bytes: number) => ({ next: () => bytes });

describe('BatchBudget', () => {
  it('gives a read alone half the budget per batch (it holds two), round after round', () => {
    const budget = new BatchBudget();
    const read = budget.join();
    expect(read.next(200_000)).toBe(STREAM_BATCH_BUDGET / 2);
    expect(read.next(STREAM_BATCH_BUDGET / 2)).toBe(STREAM_BATCH_BUDGET / 2);
    expect(budget.held).toBe(STREAM_BATCH_BUDGET);
    read.leave();
    expect(budget.held).toBe(0);
  });

  it('leaves later reads what the earlier ones do not hold, and never less than the smallest batch', () => {
    const budget = new BatchBudget();
    // Sixteen exports whose clients stop reading, one after the other: each holds its first
    // batch (200 kB) and the one it asked for ahead.
    const reads = Array.from({ length: 16 }, () => budget.join());
    const asked = reads.map((read) => read.next(200_000));
    expect(asked[0]).toBe(STREAM_BATCH_BUDGET / 2);
    expect(asked[1]).toBe(STREAM_BATCH_BUDGET / 2 - 2 * 200_000);
    for (const bytes of asked.slice(3)) expect(bytes).toBe(MIN_BATCH_BYTES);
    // Together: about the budget, plus the smallest batch and the first for each of the others.
    expect(budget.held).toBeLessThan(STREAM_BATCH_BUDGET + 16 * (MIN_BATCH_BYTES + 200_000));
    for (const read of reads) read.leave();
    expect(budget.held).toBe(0);
  });

  it('gives back what a read held once it ends, for the reads still going', () => {
    const budget = new BatchBudget();
    const first = budget.join();
    const second = budget.join();
    first.next(200_000);
    expect(second.next(200_000)).toBeLessThan(STREAM_BATCH_BUDGET / 2);
    first.leave();
    first.leave();
    expect(second.next(MiB)).toBe(STREAM_BATCH_BUDGET / 2);
  });
});

describe('BatchSizer', () => {
  it('sizes the next batch to the bytes its share allows, in records of the size read so far', () => {
    const sizer = new BatchSizer(share(MiB));
    expect(sizer.next(...records(101, 2_048))).toBe(512);
    // The average of everything read: 101 records of 2 kB and 101 of 6 kB.
    expect(sizer.next(...records(101, 6_144))).toBe(256);
  });

  it('keeps batches between 16 and 100,000 records, whatever the records weigh', () => {
    expect(new BatchSizer(share(MiB)).next(...records(10, 4 * MiB))).toBe(16);
    expect(new BatchSizer(share(8 * MiB)).next(...records(101, 8))).toBe(100_000);
  });

  it('leaves the engine its size until a record was read', () => {
    expect(new BatchSizer(share(MiB)).next(0, 0)).toBeUndefined();
  });
});
