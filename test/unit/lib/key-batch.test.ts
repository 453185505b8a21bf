import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { KeyBatch } from '../../../src/lib/key-batch.js';

/** A lookup that records every batch of keys it is asked for and answers each key doubled. */
function recordingLookup() {
  const batches: number[][] = [];
  const lookup = async (keys: number[]) => {
    batches.push([...keys]);
    return new Map(keys.filter((k) => k >= 0).map((k) => [k, k * 2]));
  };
  return { batches, lookup };
}

describe('KeyBatch', () => {
  it('answers the keys asked for within one window with one lookup, each caller its own value', async () => {
    const { batches, lookup } = recordingLookup();
    const batch = new KeyBatch(lookup, 5);
    const answers = await Promise.all([1, 2, 3, 2].map((k) => batch.get(k)));
    expect(answers).toEqual([2, 4, 6, 4]);
    expect(batches).toEqual([[1, 2, 3]]);
  });

  it('answers undefined for a key the lookup does not know', async () => {
    const { lookup } = recordingLookup();
    expect(await new KeyBatch(lookup, 1).get(-1)).toBeUndefined();
  });

  it('starts a new lookup for keys asked after the window closed', async () => {
    const { batches, lookup } = recordingLookup();
    const batch = new KeyBatch(lookup, 2);
    const first = batch.get(1);
    await sleep(20);
    const second = batch.get(2);
    expect([await first, await second]).toEqual([2, 4]);
    expect(batches).toEqual([[1], [2]]);
  });

  it('closes a batch at its size limit and puts the next keys in another', async () => {
    const { batches, lookup } = recordingLookup();
    const batch = new KeyBatch(lookup, 5, 2);
    expect(await Promise.all([1, 2, 3, 4, 5].map((k) => batch.get(k)))).toEqual([2, 4, 6, 8, 10]);
    expect(batches).toEqual([[1, 2], [3, 4], [5]]);
  });

  it("rejects a failed lookup's callers only, and later calls look up afresh", async () => {
    let calls = 0;
    const batch = new KeyBatch<number, number>(async (keys) => {
      calls += 1;
      if (calls === 1) throw new Error('engine unavailable');
      return new Map(keys.map((k) => [k, k]));
    }, 1);
    const failed = await Promise.allSettled([batch.get(1), batch.get(2)]);
    expect(failed.map((r) => r.status)).toEqual(['rejected', 'rejected']);
    expect(await batch.get(3)).toBe(3);
    expect(calls).toBe(2);
  });
});
