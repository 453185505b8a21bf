/**
 * Start-up migration to usernames unique without case. Earlier versions compared names exactly,
 * so `SEC_TASK` and `sec_task` could both exist; now every user carries `username_key` (the name
 * in lower case) under a unique index, which cannot be built while two users share a key.
 *
 * Of the users that share a key, the oldest (earliest date_joined, then the oldest id) keeps its
 * name; each other one is renamed to its name with the first free `-2`, `-3` ... suffix, and every
 * rename is logged at warning level (old name, new name, the account that kept the name) for the
 * operator to tell those users. A renamed account keeps its id, password, API token, sessions and
 * rights; it logs in with its new name. Users whose key is missing or stale only get it set.
 * Idempotent: once every key is right there is nothing to do.
 */
import type { Collection } from 'mongodb';
import type { Types } from 'mongoose';
import type { Logger } from '../log/logger.js';
import { usernameKey } from './models.js';

/** What the migration reads of each user. */
export interface StoredName {
  _id: Types.ObjectId;
  username: string;
  username_key?: string;
  date_joined?: Date;
}

export interface UsernameRename {
  id: Types.ObjectId;
  from: string;
  to: string;
  /** The account that kept the name. */
  keeps: string;
}

export interface UsernamePlan {
  /** Users whose key is missing or stale, with the key they get. */
  keys: { id: Types.ObjectId; key: string }[];
  renames: UsernameRename[];
}

/** Django's limit on a username's length (the pattern in models.ts). */
const MAX_USERNAME = 150;

function joinedBefore(a: StoredName, b: StoredName): number {
  const at = (u: StoredName): number => u.date_joined?.getTime() ?? Number.POSITIVE_INFINITY;
  return at(a) - at(b) || a._id.toHexString().localeCompare(b._id.toHexString());
}

/** The first `name-N` (N ≥ 2) whose key nobody holds, cut so it stays within MAX_USERNAME. */
function freeName(name: string, taken: Set<string>): string {
  for (let n = 2; ; n += 1) {
    const suffix = `-${n}`;
    const candidate = name.slice(0, MAX_USERNAME - suffix.length) + suffix;
    if (!taken.has(usernameKey(candidate))) return candidate;
  }
}

/** What to change so that every user has its right key and no two share one. */
export function planUsernameKeys(users: readonly StoredName[]): UsernamePlan {
  const groups = new Map<string, StoredName[]>();
  for (const user of users) {
    const key = usernameKey(user.username);
    groups.set(key, [...(groups.get(key) ?? []), user]);
  }
  const taken = new Set(groups.keys());
  const plan: UsernamePlan = { keys: [], renames: [] };
  for (const [key, sharing] of [...groups].sort(([a], [b]) => a.localeCompare(b))) {
    const [keeper, ...others] = [...sharing].sort(joinedBefore);
    if (keeper === undefined) continue;
    if (keeper.username_key !== key) plan.keys.push({ id: keeper._id, key });
    for (const other of others) {
      const to = freeName(other.username, taken);
      taken.add(usernameKey(to));
      plan.renames.push({ id: other._id, from: other.username, to, keeps: keeper.username });
    }
  }
  return plan;
}

/** Reads every user's name, then gives each its key and renames the later of names apart only in case. */
export async function migrateUsernameKeys(users: Collection<StoredName>, logger: Logger): Promise<UsernamePlan> {
  const stored = await users.find({}, { projection: { username: 1, username_key: 1, date_joined: 1 } }).toArray();
  const plan = planUsernameKeys(stored);
  const changing = [...plan.keys.map((k) => k.id), ...plan.renames.map((r) => r.id)];
  if (changing.length === 0) return plan;
  // Stale keys first, so that no key set below meets one that is about to go.
  await users.updateMany({ _id: { $in: changing } }, { $unset: { username_key: '' } });
  for (const rename of plan.renames) {
    await users.updateOne({ _id: rename.id }, { $set: { username: rename.to, username_key: usernameKey(rename.to) } });
    logger.warn(
      { from: rename.from, to: rename.to, keeps: rename.keeps },
      'username renamed: another account has the same name apart from case, and usernames are now unique without case',
    );
  }
  for (const { id, key } of plan.keys) await users.updateOne({ _id: id }, { $set: { username_key: key } });
  if (plan.keys.length > 0) logger.info({ users: plan.keys.length }, 'usernames given their case-insensitive key');
  return plan;
}
