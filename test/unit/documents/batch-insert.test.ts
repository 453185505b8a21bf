/**
 * How an array insert is split into commands: equal commands of at most about
 * INSERT_COMMAND_BYTES of text, each cut short once it holds INSERT_COMMAND_INT64S int64s.
 */
import { Long, type Document } from 'mongodb';
import { describe, expect, it } from 'vitest';
import { commandRecords, INSERT_COMMAND_BYTES, INSERT_COMMAND_INT64S, recordsPerCommand } from '../../../src/documents/batch-insert.js';
import { parseJsonBody } from '../../../src/documents/extended-json.js';
import { parseRecordJson } from '../../../src/documents/number-literals.js';

const MB = INSERT_COMMAND_BYTES;

describe('recordsPerCommand', () => {
  it.each([
    // count, text bytes, records per command
    [10_000, undefined, 10_000],
    [10_000, MB, 10_000],
    [10_000, MB + 1, 5_000],
    [10_000, 10 * MB, 1_000],
    [10_001, 10 * MB, 1_001],
    [3, 15 * MB, 1],
    [1, 15 * MB, 1],
    [0, undefined, 1],
  ] as const)('%i records of %s bytes: %i a command', (count, bytes, expected) => {
    expect(recordsPerCommand(count, bytes)).toBe(expected);
  });

  it('never makes a command of more than about INSERT_COMMAND_BYTES of average records', () => {
    for (const [count, bytes] of [
      [4000, 4_200_000],
      [123, 9_999_999],
      [100_000, 16 * MB],
    ] as const) {
      const size = recordsPerCommand(count, bytes);
      expect((size * bytes) / count).toBeLessThanOrEqual(MB * 1.01);
    }
  });
});

describe('commandRecords: a command bounded by its int64s as well as by its bytes', () => {
  const wide = (i: number) => 300_000_000_000 + i;
  /** Records of `n` int64s each (the first an `_id`), as a parsed body holds them. */
  const int64Records = (count: number, n: number) =>
    parseJsonBody(
      parseRecordJson(
        JSON.stringify(
          Array.from({ length: count }, (_, i) => ({
            _id: wide(i),
            ...Object.fromEntries(Array.from({ length: n - 1 }, (_, k) => [`f${k}`, wide(k)])),
          })),
        ),
      ),
    ) as Document[];

  /** Every command of `docs`, as insertBatch sends them. */
  const commands = (docs: Document[], perCommand: number): Document[][] => {
    const out: Document[][] = [];
    for (let from = 0; from < docs.length;) {
      const records = commandRecords(docs, from, perCommand);
      out.push(records);
      from += records.length;
    }
    return out;
  };

  it('cuts a command once its records hold INSERT_COMMAND_INT64S int64s, and never leaves one out or repeats it', () => {
    const docs = int64Records(10_000, 4);
    const sent = commands(docs, docs.length);
    const perCommand = Math.ceil(INSERT_COMMAND_INT64S / 4);
    expect(sent.map((records) => records.length)).toEqual([
      ...Array<number>(Math.floor(10_000 / perCommand)).fill(perCommand),
      10_000 % perCommand,
    ]);
    const flat = sent.flat();
    expect(flat.map((record) => (record._id as Long).toNumber())).toEqual(docs.map((_, i) => wide(i)));
    expect(flat.every((record) => record.f2 instanceof Long && (record.f2 as Long).toNumber() === wide(2))).toBe(true);
  });

  it('keeps the count of records asked for when that comes first, and gives one record of more int64s a command of its own', () => {
    const docs = int64Records(100, 4);
    expect(commands(docs, 30).map((records) => records.length)).toEqual([30, 30, 30, 10]);
    const big = parseJsonBody(
      parseRecordJson(`[{"a": 1}, {"v": [${Array.from({ length: INSERT_COMMAND_INT64S + 5 }, (_, i) => wide(i)).join(',')}]}, {"b": 2}]`),
    ) as Document[];
    expect(commands(big, 3).map((records) => records.length)).toEqual([2, 1]);
  });

  it('keeps each int64 exactly, beyond 2^53 too ($numberLong)', () => {
    const docs = parseJsonBody(parseRecordJson('[{"a": 9007199254740993, "b": -9223372036854775808, "c": 123456789012}]')) as Document[];
    const [record] = commandRecords(docs, 0, 1);
    expect([record?.a, record?.b, record?.c].map((value) => (value as Long).toString())).toEqual([
      '9007199254740993',
      '-9223372036854775808',
      '123456789012',
    ]);
  });

  it('hands an int64-free body over in slices of the count asked for', () => {
    const docs = parseJsonBody(parseRecordJson(JSON.stringify(Array.from({ length: 50 }, (_, i) => ({ i }))))) as Document[];
    expect(commands(docs, 20).map((records) => records.length)).toEqual([20, 20, 10]);
    expect(commandRecords(docs, 0, 20)[3]).toBe(docs[3]);
  });
});
