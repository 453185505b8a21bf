/**
 * Result writes grouped into one bulkWrite: each write still answers for itself, refused ones
 * run alone, an outage fails them all, and a lone write takes the single-document path.
 */
import { MongoBulkWriteError, MongoNetworkError, type AnyBulkWriteOperation, type BulkWriteResult, type Document } from 'mongodb';
import { describe, expect, it } from 'vitest';
import { GroupedWrites, type GroupedCollection } from '../../../src/worker/grouped-writes.js';

type BulkAnswer = (ops: AnyBulkWriteOperation<Document>[]) => Promise<BulkWriteResult>;

function fakeCollection(answer: BulkAnswer, rows: Document[] = []) {
  const calls: { bulk: number[]; finds: unknown[] } = { bulk: [], finds: [] };
  const collection: GroupedCollection = {
    bulkWrite: (ops) => {
      calls.bulk.push(ops.length);
      return answer(ops);
    },
    find: (filter) => {
      calls.finds.push(filter);
      return { toArray: () => Promise.resolve(rows) };
    },
  };
  return { collection, calls };
}
const result = (upsertedIds: Record<number, string> = {}): BulkWriteResult => ({ upsertedIds }) as unknown as BulkWriteResult;
const doc = (id: string): Document & { _id: string } => ({ _id: id, status: 'SUCCESS' });

describe('GroupedWrites', () => {
  it('sends writes made in the same turn as one bulkWrite and resolves each', async () => {
    const { collection, calls } = fakeCollection(() => Promise.resolve(result()));
    const group = new GroupedWrites(collection);
    const alone: string[] = [];
    await Promise.all(['a', 'b', 'c'].map((id) => group.replace(doc(id), () => Promise.resolve(void alone.push(id)))));
    expect(calls.bulk).toEqual([3]);
    expect(alone).toEqual([]);
  });

  it('a lone write goes out through its own single-document path', async () => {
    const { collection, calls } = fakeCollection(() => Promise.resolve(result()));
    const group = new GroupedWrites(collection);
    let aloneCalls = 0;
    await group.replace(doc('a'), () => Promise.resolve(void aloneCalls++));
    expect(calls.bulk).toEqual([]);
    expect(aloneCalls).toBe(1);
  });

  it('never puts two writes of one document in the same group', async () => {
    const seen: string[][] = [];
    const { collection } = fakeCollection((ops) => {
      seen.push(ops.map((op) => String((op as unknown as { replaceOne: { replacement: { _id: string } } }).replaceOne.replacement._id)));
      return Promise.resolve(result());
    });
    const group = new GroupedWrites(collection);
    const aloneIds: string[] = [];
    const alone = (id: string) => () => Promise.resolve(void aloneIds.push(id));
    await Promise.all([group.replace(doc('a'), alone('a')), group.replace(doc('b'), alone('b')), group.replace(doc('a'), alone('a2'))]);
    expect(seen).toEqual([['a', 'b']]);
    expect(aloneIds).toEqual(['a2']); // the second write of 'a' came next, alone
  });

  it('answers upserted updates as inserted, reads the others back, and runs refused ones alone', async () => {
    const bulkError = Object.assign(Object.create(MongoBulkWriteError.prototype) as MongoBulkWriteError, {
      writeErrors: [{ index: 2, code: 11000, errmsg: 'duplicate key' }],
      result: result({ 0: 'new' }),
    });
    const { collection, calls } = fakeCollection(() => Promise.reject(bulkError), [{ _id: 'old', n: 3 }]);
    const group = new GroupedWrites(collection, { n: 1 });
    const answer = (inserted: boolean, document: Document | undefined) => (inserted ? 1 : (document?.n as number));
    const [fresh, existing, refused] = await Promise.all([
      group.update('new', { _id: 'new' }, { $inc: { n: 1 } }, answer, () => Promise.resolve(-1)),
      group.update('old', { _id: 'old' }, { $inc: { n: 1 } }, answer, () => Promise.resolve(-1)),
      group.update('final', { _id: 'final' }, { $inc: { n: 1 } }, answer, () => Promise.resolve(-2)),
    ]);
    expect([fresh, existing, refused]).toEqual([1, 3, -2]);
    expect(calls.finds).toEqual([{ _id: { $in: ['old'] } }]);
  });

  it('an outage fails every write of the group with the same error (their retry loops take over)', async () => {
    const outage = new MongoNetworkError('connection reset');
    const { collection } = fakeCollection(() => Promise.reject(outage));
    const group = new GroupedWrites(collection);
    const outcomes = await Promise.allSettled([
      group.replace(doc('a'), () => Promise.resolve()),
      group.replace(doc('b'), () => Promise.resolve()),
    ]);
    expect(outcomes.map((o) => (o.status === 'rejected' ? o.reason : o.status))).toEqual([outage, outage]);
  });

  it('a group refused as a whole (a document too large to send) runs each write alone', async () => {
    const { collection } = fakeCollection(() => Promise.reject(new TypeError('cannot encode')));
    const group = new GroupedWrites(collection);
    const refusal = new Error('too large');
    const outcomes = await Promise.allSettled([
      group.replace(doc('a'), () => Promise.resolve()),
      group.replace(doc('b'), () => Promise.reject(refusal)),
    ]);
    expect(outcomes.map((o) => o.status)).toEqual(['fulfilled', 'rejected']);
  });

  it('writes arriving while a group is in flight form the next group', async () => {
    let release: () => void = () => undefined;
    const { collection, calls } = fakeCollection(
      () =>
        new Promise((resolve) => {
          release = () => resolve(result());
        }),
    );
    const group = new GroupedWrites(collection);
    const first = Promise.all([group.replace(doc('a'), () => Promise.resolve()), group.replace(doc('b'), () => Promise.resolve())]);
    await new Promise((r) => setImmediate(r));
    const second = Promise.all([group.replace(doc('c'), () => Promise.resolve()), group.replace(doc('d'), () => Promise.resolve())]);
    await new Promise((r) => setImmediate(r));
    expect(calls.bulk).toEqual([2]);
    release();
    await first;
    await new Promise((r) => setImmediate(r));
    release();
    await second;
    expect(calls.bulk).toEqual([2, 2]);
  });
});
