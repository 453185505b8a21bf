/**
 * Final-state reads grouped into one find: the ids asked for in one turn go out together, each
 * gets its own document or null, a read never waits for one in flight, and a failure reaches
 * every id of its read.
 */
import type { Document } from 'mongodb';
import { describe, expect, it } from 'vitest';
import { GroupedReads, type ReadCollection } from '../../../src/worker/grouped-reads.js';

function fakeCollection(rows: Document[], answer?: () => Promise<Document[]>) {
  const filters: Document[] = [];
  const collection: ReadCollection = {
    find: (filter) => {
      filters.push(filter);
      const ids = (filter._id as { $in?: string[] }).$in ?? [filter._id as string];
      return { toArray: () => answer?.() ?? Promise.resolve(rows.filter((row) => ids.includes(String(row._id)))) };
    },
  };
  return { collection, filters };
}

describe('GroupedReads', () => {
  it('reads the ids asked for in the same turn with one find and answers each', async () => {
    const { collection, filters } = fakeCollection([{ _id: 'a', status: 'REVOKED' }]);
    const reads = new GroupedReads(collection, { status: 1 });
    const answers = await Promise.all(['a', 'b', 'a'].map((id) => reads.get(id)));
    expect(filters).toEqual([{ _id: { $in: ['a', 'b'] } }]);
    expect(answers).toEqual([{ _id: 'a', status: 'REVOKED' }, null, { _id: 'a', status: 'REVOKED' }]);
  });

  it('a lone id is read by itself', async () => {
    const { collection, filters } = fakeCollection([]);
    expect(await new GroupedReads(collection, { status: 1 }).get('x')).toBeNull();
    expect(filters).toEqual([{ _id: 'x' }]);
  });

  it('does not wait for a read still in flight', async () => {
    let release: (rows: Document[]) => void = () => undefined;
    const slow = new Promise<Document[]>((resolve) => (release = resolve));
    let calls = 0;
    const { collection, filters } = fakeCollection([], () => (++calls === 1 ? slow : Promise.resolve([])));
    const reads = new GroupedReads(collection, { status: 1 });
    const first = reads.get('a');
    await new Promise((resolve) => setImmediate(resolve));
    expect(await reads.get('b')).toBeNull(); // answered while the first read still waits
    release([]);
    expect(await first).toBeNull();
    expect(filters).toHaveLength(2);
  });

  it('a failed read fails every id it carried', async () => {
    const { collection } = fakeCollection([], () => Promise.reject(new Error('connection reset')));
    const reads = new GroupedReads(collection, { status: 1 });
    const results = await Promise.allSettled([reads.get('a'), reads.get('b')]);
    expect(results.map((r) => r.status)).toEqual(['rejected', 'rejected']);
  });
});
