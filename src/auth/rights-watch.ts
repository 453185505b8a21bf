/**
 * Who lost rights through a change to accounts. A task carries its submitter's rights in its
 * message (see queue/protocol/submitter-access.ts), so a task still queued when its submitter
 * is deactivated, deleted, or loses a permission (their own, or a group's, or a group) would
 * run with rights the user no longer has. Changes that can take rights away run through
 * `watchRights`: it reads the effective rights of the users the change may touch before and
 * after it, and tells `onLost` the account ids of those who have fewer afterwards (so their
 * queued tasks can be revoked). Gaining rights, or changing other fields, tells nothing.
 */
import type { QueryFilter, Types } from 'mongoose';
import type { AuthModels, UserRecord } from './models.js';

/** Told the account ids of users who lost rights; its failure is the caller's to report. */
export type RightsLostListener = (userIds: string[]) => Promise<void>;

interface Rights {
  username: string;
  active: boolean;
  superuser: boolean;
  codenames: Set<string>;
}

/** The effective rights of the users `filter` matches: active, superuser, own and groups' codenames. */
async function rightsOf(models: AuthModels, filter: QueryFilter<UserRecord>): Promise<Map<string, Rights>> {
  const users = await models.User.find(filter, { username: 1, is_active: 1, is_superuser: 1, permissions: 1, groups: 1 }).lean().exec();
  const groupIds = [...new Set(users.flatMap((u) => (u.groups ?? []).map(String)))];
  const groups =
    groupIds.length === 0
      ? []
      : await models.Group.find({ _id: { $in: groupIds } }, { permissions: 1 })
          .lean()
          .exec();
  const groupCodes = new Map(groups.map((g) => [String(g._id), g.permissions ?? []]));
  return new Map(
    users.map((u) => [
      String(u._id),
      {
        username: u.username,
        active: u.is_active,
        superuser: u.is_superuser,
        codenames: new Set([...(u.permissions ?? []), ...(u.groups ?? []).flatMap((g) => groupCodes.get(String(g)) ?? [])]),
      },
    ]),
  );
}

/** Whether `after` has less than `before`: gone, inactive, no longer superuser, or a codename fewer. */
export function hasLostRights(before: Rights, after: Rights | undefined): boolean {
  if (after === undefined) return true;
  if (before.active && !after.active) return true;
  if (before.superuser && !after.superuser) return true;
  for (const code of before.codenames) if (!after.codenames.has(code)) return true;
  return false;
}

/**
 * Runs `change` and tells `onLost` who among the users `affected` matches (read before the
 * change) has fewer rights after it. The change's own result is returned.
 */
export async function watchRights<T>(
  models: AuthModels,
  affected: QueryFilter<UserRecord>,
  change: () => Promise<T>,
  onLost: RightsLostListener | undefined,
): Promise<T> {
  if (onLost === undefined) return change();
  const before = await rightsOf(models, affected);
  const result = await change();
  if (before.size === 0) return result;
  const after = await rightsOf(models, { _id: { $in: [...before.keys()] as unknown as Types.ObjectId[] } });
  const lost = [...before].filter(([id, rights]) => hasLostRights(rights, after.get(id))).map(([id]) => id);
  if (lost.length > 0) await onLost(lost);
  return result;
}

/** `watchRights` bound to the models and a listener: what the account-changing code is given. */
export type RightsWatch = <T>(affected: QueryFilter<UserRecord>, change: () => Promise<T>) => Promise<T>;

export function rightsWatch(models: AuthModels, onLost: RightsLostListener | undefined): RightsWatch {
  return (affected, change) => watchRights(models, affected, change, onLost);
}
