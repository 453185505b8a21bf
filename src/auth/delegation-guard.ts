/**
 * The delegation rules (delegation.ts) checked against the database: every admin-site action
 * that grants rights or hands out a token asks this before it writes anything. The acting
 * account is read afresh (through the account cache, as every request is), so a right revoked a
 * moment ago cannot be passed on.
 */
import type { Types } from 'mongoose';
import { forbidden } from '../errors.js';
import type { AccountDirectory } from './accounts.js';
import { mayManageTokenOf, mayTakeOver, undelegable, type Grantor } from './delegation.js';
import type { AuthModels } from './models.js';

const notAllowed = (message: string) => forbidden(message, 'not_delegable');

export class DelegationGuard {
  constructor(
    private readonly models: AuthModels,
    private readonly accounts: AccountDirectory,
  ) {}

  private async grantor(actorId: string): Promise<Grantor> {
    const account = await this.accounts.byId(actorId);
    if (account === null || !account.isActive || !(account.isStaff || account.isSuperuser)) {
      throw notAllowed('Only active staff and superusers may change rights.');
    }
    return account;
  }

  /** Throws 403 `not_delegable` unless the actor may give every one of these codenames. */
  async assertMayGrant(actorId: string, codenames: readonly string[]): Promise<void> {
    if (codenames.length === 0) return;
    const refused = undelegable(await this.grantor(actorId), codenames);
    if (refused.length > 0) {
      throw notAllowed(
        `Only a superuser may grant ${refused.join(', ')}: staff grant only permissions they hold themselves, ` +
          'and never an area-wide role (datastore_admin, datastore_create, catalog_admin, catalog_create, task_admin).',
      );
    }
  }

  /** Putting someone into a group gives them the group's permissions: the same rule as granting them. */
  async assertMayAddToGroups(actorId: string, groupIds: readonly (string | Types.ObjectId)[]): Promise<void> {
    if (groupIds.length === 0) return;
    const grantor = await this.grantor(actorId);
    if (grantor.isSuperuser) return;
    const groups = await this.models.Group.find({ _id: { $in: groupIds } }, { name: 1, permissions: 1 })
      .lean()
      .exec();
    for (const group of groups) {
      const refused = undelegable(grantor, group.permissions);
      if (refused.length > 0) {
        throw notAllowed(
          `Only a superuser may add members to group "${group.name}": it grants ${refused.join(', ')}, ` + 'which staff may not grant.',
        );
      }
    }
  }

  /** Throws 403 `superuser_only` unless the actor is a superuser or the token's owner. */
  async assertMayManageTokenOf(actorId: string, ownerId: string): Promise<void> {
    if (!mayManageTokenOf(await this.grantor(actorId), ownerId)) {
      throw forbidden("Only a superuser may issue, rotate, revoke or see another user's token.", 'superuser_only');
    }
  }

  /**
   * Throws 403 `not_delegable` unless the actor may rename this account (see mayTakeOver): an
   * account renamed away frees its name for another, and one renamed onto a name takes whatever
   * others still know it by.
   */
  async assertMayRename(actorId: string, targetId: string): Promise<void> {
    const actor = await this.grantor(actorId);
    const target = await this.accounts.byId(targetId);
    if (target === null || mayTakeOver(actor, target)) return;
    throw notAllowed(`Only a superuser may rename ${target.username}: the account holds rights you may not grant.`);
  }

  /** Throws 403 `not_delegable` unless the actor may set this account's password (see mayTakeOver). */
  async assertMaySetPasswordOf(actorId: string, targetId: string): Promise<void> {
    const actor = await this.grantor(actorId);
    const target = await this.accounts.byId(targetId);
    if (target === null || mayTakeOver(actor, target)) return;
    throw notAllowed(
      `Only a superuser may set the password of ${target.username}: the account holds rights you may not grant, ` +
        'and its password would let you act with them.',
    );
  }
}
