import { describe, expect, it } from 'vitest';
import { MongoServerError } from 'mongodb';
import { isDeadlock, retryOnDeadlock } from '../../../src/db/deadlock-retry.js';

const deadlock = () => new MongoServerError({ errmsg: 'deadlock detected', code: 1 });
const other = () => new MongoServerError({ errmsg: 'index not found', code: 27 });

describe('retryOnDeadlock', () => {
  it('runs the operation again after a deadlock and returns its result', async () => {
    let calls = 0;
    const result = await retryOnDeadlock(async () => {
      calls += 1;
      if (calls < 3) throw deadlock();
      return 'done';
    });
    expect(result).toBe('done');
    expect(calls).toBe(3);
  });

  it('rethrows any other error at once', async () => {
    let calls = 0;
    await expect(
      retryOnDeadlock(async () => {
        calls += 1;
        throw other();
      }),
    ).rejects.toThrow('index not found');
    expect(calls).toBe(1);
  });

  it('gives up after five deadlocks in a row', async () => {
    let calls = 0;
    await expect(
      retryOnDeadlock(async () => {
        calls += 1;
        throw deadlock();
      }),
    ).rejects.toSatisfy(isDeadlock);
    expect(calls).toBe(5);
  });
});
