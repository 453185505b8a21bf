import { describe, expect, it } from 'vitest';
import { WriteBatcher } from '../../../src/db/write-batcher.js';

/** A flush that records each batch and finishes when the test says so. */
function controlledFlush(outcome: (item: number) => Error | null = () => null) {
  const batches: number[][] = [];
  const finish: (() => void)[] = [];
  const flush = (items: readonly number[]) => {
    batches.push([...items]);
    return new Promise<(Error | null)[]>((resolve) => finish.push(() => resolve(items.map(outcome))));
  };
  return { batches, finish, flush };
}

const settle = () => new Promise((r) => setImmediate(r));

describe('WriteBatcher', () => {
  it('sends the first write at once and coalesces the writes that arrive while it is in flight', async () => {
    const f = controlledFlush();
    const batcher = new WriteBatcher(f.flush);
    const first = batcher.write(1);
    expect(f.batches).toEqual([[1]]);
    const rest = [2, 3, 4].map((n) => batcher.write(n));
    expect(f.batches).toHaveLength(1);
    f.finish[0]?.();
    await first;
    await settle();
    expect(f.batches).toEqual([[1], [2, 3, 4]]);
    f.finish[1]?.();
    await Promise.all(rest);
    await batcher.idle();
  });

  it('gives each caller its own outcome', async () => {
    const f = controlledFlush((n) => (n % 2 === 0 ? new Error(`even ${n}`) : null));
    const batcher = new WriteBatcher(f.flush);
    const writes = [1, 2, 3, 4].map((n) =>
      batcher.write(n).then(
        () => 'ok',
        (e: Error) => e.message,
      ),
    );
    f.finish[0]?.();
    await settle();
    f.finish[1]?.();
    expect(await Promise.all(writes)).toEqual(['ok', 'even 2', 'ok', 'even 4']);
  });

  it('rejects the whole batch when the flush itself fails, and keeps working afterwards', async () => {
    let fail = true;
    const batcher = new WriteBatcher<number>(async (items) => {
      if (fail) throw new Error('connection lost');
      return items.map(() => null);
    });
    await expect(batcher.write(1)).rejects.toThrow('connection lost');
    fail = false;
    await expect(batcher.write(2)).resolves.toBeUndefined();
  });

  it('rejects an item the flush reported nothing for', async () => {
    const batcher = new WriteBatcher<number>(async () => []);
    await expect(batcher.write(1)).rejects.toThrow(/no outcome/);
  });

  it('splits what waits into batches of at most maxBatch', async () => {
    const f = controlledFlush();
    const batcher = new WriteBatcher(f.flush, 2);
    const writes = [1, 2, 3, 4, 5].map((n) => batcher.write(n));
    for (let i = 0; i < 4; i++) {
      f.finish[i]?.();
      await settle();
    }
    await Promise.all(writes);
    expect(f.batches).toEqual([[1], [2, 3], [4, 5]]);
  });

  it('refuses a batch size below one', () => {
    expect(() => new WriteBatcher(async () => [], 0)).toThrow(RangeError);
  });
});
