/**
 * When a cached account expires under load, the requests that arrive before the database answers
 * share one lookup instead of each sending its own; a change made meanwhile is never hidden by a
 * lookup begun before it. The models are stand-ins that count queries (no database here).
 */
import { describe, expect, it } from 'vitest';
import { AccountDirectory } from '../../../src/auth/accounts.js';
import type { AuthModels } from '../../../src/auth/models.js';

const USER_ID = '0123456789abcdef01234567';

function directory(): { accounts: AccountDirectory; queries: { users: number; tokens: number } } {
  const queries = { users: 0, tokens: 0 };
  const answer = <T>(value: T) => ({ select: () => answer(value), lean: () => answer(value), exec: () => Promise.resolve(value) });
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
        queries.users++;
        return answer(user);
      },
    },
    Token: {
      findOne: () => {
        queries.tokens++;
        return answer({ user: { toString: () => USER_ID } });
      },
    },
  } as unknown as AuthModels;
  return { accounts: new AccountDirectory(models, 'secret'), queries };
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
});
