/**
 * Groups in the admin site: a name and the permissions every member gets. Deleting a group
 * takes it off its members. A permission added to a group is granted to its members, so it must
 * be the actor's to give (src/auth/delegation.ts).
 */
import type { ActionContext, ActionRequest, ResourceOptions } from 'adminjs';
import type { Model } from 'mongoose';
import type { DelegationGuard } from '../../auth/delegation-guard.js';
import type { GroupRecord, UserRecord } from '../../auth/models.js';
import type { RightsWatch } from '../../auth/rights-watch.js';
import { component } from '../components.js';
import type { AdminDeps } from '../deps.js';
import { GrantHolderResource, type GrantChecks } from './grant-holder-resource.js';
import { ACCESS_CONTROL } from './navigation.js';
import { normalizePermissions } from './permission-field.js';

export class GroupResource extends GrantHolderResource<GroupRecord> {
  constructor(
    model: Model<GroupRecord>,
    private readonly users: Model<UserRecord>,
    delegation: DelegationGuard,
    watchRights: RightsWatch,
  ) {
    super(model, delegation, watchRights);
  }

  protected override readonly grantChecks: GrantChecks = {
    permissions: (actor, codenames) => this.delegation.assertMayGrant(actor, codenames),
  };

  /** The group's members: a permission taken from the group revokes their queued tasks. */
  protected override holders(id: string) {
    return { groups: id };
  }

  /** Its members leave the deleted group. */
  protected override async deleteDependents(id: string): Promise<void> {
    await this.users.updateMany({ groups: id }, { $pull: { groups: id } }).exec();
  }
}

export function groupResource(deps: AdminDeps): { resource: GroupResource; options: ResourceOptions } {
  const beforeSave = async (request: ActionRequest, _context: ActionContext): Promise<ActionRequest> => {
    if (request.method !== 'post' || request.payload === undefined) return request;
    const payload = { ...request.payload };
    if (typeof payload.name === 'string') payload.name = payload.name.trim();
    return { ...request, payload: await normalizePermissions(payload, deps.catalog) };
  };
  return {
    resource: new GroupResource(deps.models.Group, deps.models.User, deps.delegation, deps.watchRights),
    options: {
      navigation: ACCESS_CONTROL,
      sort: { sortBy: 'name', direction: 'asc' },
      listProperties: ['name', 'permissions'],
      showProperties: ['name', 'permissions', '_id'],
      editProperties: ['name', 'permissions'],
      filterProperties: ['name', 'permissions'],
      properties: {
        name: { isTitle: true },
        permissions: { components: { edit: component('PermissionsEdit') } },
      },
      actions: {
        new: { before: [beforeSave] },
        edit: { before: [beforeSave] },
      },
    },
  };
}
