/** The start-up plan for usernames unique without case: keys for all, renames for the later duplicates. */
import { Types } from 'mongoose';
import { describe, expect, it } from 'vitest';
import { planUsernameKeys, type StoredName } from '../../../src/auth/username-migration.js';

const id = (n: number) => new Types.ObjectId(n.toString(16).padStart(24, '0'));
const user = (n: number, username: string, joined?: string, key?: string): StoredName => ({
  _id: id(n),
  username,
  ...(joined === undefined ? {} : { date_joined: new Date(joined) }),
  ...(key === undefined ? {} : { username_key: key }),
});

describe('planUsernameKeys', () => {
  it('has nothing to do when every key is right and unique', () => {
    expect(planUsernameKeys([user(1, 'Alice', undefined, 'alice'), user(2, 'bob', undefined, 'bob')])).toEqual({ keys: [], renames: [] });
  });

  it('sets missing and stale keys', () => {
    const plan = planUsernameKeys([user(1, 'Alice'), user(2, 'bob', undefined, 'robert')]);
    expect(plan.keys).toEqual([
      { id: id(1), key: 'alice' },
      { id: id(2), key: 'bob' },
    ]);
    expect(plan.renames).toEqual([]);
  });

  it('keeps the oldest account and renames the others to the first free suffix', () => {
    const plan = planUsernameKeys([
      user(5, 'SEC_TASK', '2024-02-01'),
      user(1, 'sec_task', '2024-03-01'),
      user(3, 'Sec_Task', '2024-01-01'),
      user(4, 'sec_task-2', '2024-05-01'),
    ]);
    expect(plan.keys).toEqual([
      { id: id(3), key: 'sec_task' },
      { id: id(4), key: 'sec_task-2' },
    ]);
    expect(plan.renames).toEqual([
      { id: id(5), from: 'SEC_TASK', to: 'SEC_TASK-3', keeps: 'Sec_Task' },
      { id: id(1), from: 'sec_task', to: 'sec_task-4', keeps: 'Sec_Task' },
    ]);
  });

  it('orders accounts without a join date after those with one, then by id', () => {
    const plan = planUsernameKeys([user(2, 'X'), user(1, 'x'), user(9, 'x_', '2020-01-01')]);
    expect(plan.renames).toEqual([{ id: id(2), from: 'X', to: 'X-2', keeps: 'x' }]);
  });

  it('keeps a renamed name within 150 characters', () => {
    const long = 'a'.repeat(150);
    const plan = planUsernameKeys([user(1, long, '2020-01-01'), user(2, long.toUpperCase(), '2021-01-01')]);
    expect(plan.renames[0]?.to).toBe(`${'A'.repeat(148)}-2`);
  });
});
