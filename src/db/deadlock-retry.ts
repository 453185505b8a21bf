/**
 * PostgreSQL under FerretDB/DocumentDB runs index and collection changes as transactions on a
 * shared catalog, so two of them started at once (two API processes starting, or start-up beside
 * another service on the same engine) can wait on each other; PostgreSQL then aborts one with
 * "deadlock detected". Nothing was changed by the aborted statement and it can simply run again.
 * MongoDB itself never answers this way, so there the wrapper is a plain call.
 */
import { MongoServerError } from 'mongodb';

const ATTEMPTS = 5;

export function isDeadlock(err: unknown): boolean {
  return err instanceof MongoServerError && /deadlock detected/i.test(err.errmsg ?? err.message);
}

export async function retryOnDeadlock<T>(operation: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await operation();
    } catch (err) {
      if (!isDeadlock(err) || attempt >= ATTEMPTS) throw err;
      // Apart a little, and at random, so the two sides do not collide again.
      await new Promise((resolve) => setTimeout(resolve, 20 * attempt + Math.random() * 50));
    }
  }
}
