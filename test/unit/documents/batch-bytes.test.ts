import { describe, expect, it } from 'vitest';
import { BATCH_BYTES, BatchSizer } from '../../../src/documents/batch-bytes.js';

const records = (count: number, bytes: number): Uint8Array[] => Array.from({ length: count }, () => new Uint8Array(bytes));

describe('BatchSizer', () => {
  it('sizes the next batch to about BATCH_BYTES of records of the size read so far', () => {
    const sizer = new BatchSizer();
    expect(sizer.next(records(101, 2_048))).toBe(Math.floor(BATCH_BYTES / 2_048));
    // The average of everything read: 101 records of 2 kB and 101 of 6 kB.
    expect(sizer.next(records(101, 6_144))).toBe(Math.floor(BATCH_BYTES / 4_096));
  });

  it('keeps batches between 16 and 10,000 records, whatever the records weigh', () => {
    expect(new BatchSizer().next(records(10, 4 * 1024 * 1024))).toBe(16);
    expect(new BatchSizer().next(records(101, 8))).toBe(10_000);
  });

  it('leaves the engine its size until a record was read', () => {
    expect(new BatchSizer().next([])).toBeUndefined();
  });
});
