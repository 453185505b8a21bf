/**
 * When a cached account expires under load, the requests that arrive before the database answers
 * share one lookup instead of each sending its own; a change made meanwhile is never hidden by a
 * lookup begun before it; a lookup that fails or hangs (an engine that died or stopped answering)
 * is never handed to a later request. The models are stand-ins that count queries (no database here).
 */
import { describe, expect, it } from 'vitest';
import { AccountDirectory } from '../../../src/auth/accounts.js';
import type { AuthModels } from '../../../src/auth/models.js';
import { settledWithin } from '../../support/until.js';

const USER_ID = '0123456789abcdef01234567';

/** How each query of a model answers: a value, a failure, or never (an engine that stopped answering). */
type Answer = 'ok' | 'fail' | 'hang';

/** Lookups given up after this long: short, so that a hung one is over within the test. */
const LOOKUP_TIMEOUT_MS = 100;

function directory(answers: { users?: Answer[]; tokens?: Answer[] } = {}) {
  const queries = { users: 0, tokens: 0 };
  const answer = <T>(value: T, how: Answer = 'ok') => {
    const exec = (): Promise<T> =>
      how === 'ok' ? Promise.resolve(value) : how === 'fail' ? Promise.reject(new Error('engine gone')) : new Promise<T>(() => undefined);
    const query = { select: () => query, lean: () => query, setOptions: () => query, exec };
    return query;
  };
  const user = {
    _id: { toString: () => USER_ID },
    username: 'ann',
    is_active: true,
    is_staff: false,
    is_superuser: false,
    permissions: ['a'],
    groups: [],
    password: 'hash',
  };
  const models = {
    User: {
      findById: () => {
        const n = queries.users++;
        return answer(user, answers.users?.[n]);
      },
    },
    Token: {
      findOne: () => {
        const n = queries.tokens++;
        return answer({ user: { toString: () => USER_ID } }, answers.tokens?.[n]);
      },
    },
  } as unknown as AuthModels;
  return { accounts: new AccountDirectory(models, 'secret', LOOKUP_TIMEOUT_MS), queries };
}

describe('account lookups', () => {
  it('concurrent lookups of one token share one query of the token and one of the user', async () => {
    const { accounts, queries } = directory();
    const found = await Promise.all(Array.from({ length: 32 }, () => accounts.byTokenKey('key-1')));
    expect(found.every((account) => account?.username === 'ann')).toBe(true);
    expect(queries).toEqual({ users: 1, tokens: 1 });
  });

  it('a lookup after the user was forgotten does not share the one under way', async () => {
    const { accounts, queries } = directory();
    const first = accounts.byId(USER_ID);
    accounts.forgetUser(USER_ID);
    await Promise.all([first, accounts.byId(USER_ID)]);
    expect(queries.users).toBe(2);
  });

  it('a token lookup that hangs is given up after the deadline, and the next request asks the database again', async () => {
    const { accounts, queries } = directory({ tokens: ['hang'] });
    const waiting = await Promise.allSettled(Array.from({ length: 4 }, () => settledWithin(accounts.byTokenKey('key-1'))));
    for (const lookup of waiting)
      expect(lookup).toMatchObject({ status: 'rejected', reason: { name: 'DatabaseError', kind: 'unavailable' } });
    const again = await settledWithin(accounts.byTokenKey('key-1'));
    expect(again?.username).toBe('ann');
    expect(queries.tokens).toBe(2);
  });

  it('a user lookup that hangs is given up the same way', async () => {
    const { accounts, queries } = directory({ users: ['hang'] });
    await expect(settledWithin(accounts.byId(USER_ID))).rejects.toMatchObject({ kind: 'unavailable' });
    expect((await settledWithin(accounts.byId(USER_ID)))?.username).toBe('ann');
    expect(queries.users).toBe(2);
  });

  it('a lookup that failed is not kept: the next request asks again', async () => {
    const { accounts, queries } = directory({ tokens: ['fail'], users: ['fail'] });
    await expect(settledWithin(accounts.byTokenKey('key-1'))).rejects.toThrow('engine gone');
    await expect(settledWithin(accounts.byTokenKey('key-1'))).rejects.toThrow('engine gone');
    expect((await settledWithin(accounts.byTokenKey('key-1')))?.username).toBe('ann');
    expect(queries).toEqual({ tokens: 2, users: 2 });
  });
});
