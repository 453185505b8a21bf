/**
 * Groups in the admin site: a name and the permissions every member gets. Deleting a group
 * takes it off its members. A permission added to a group is granted to its members, so it must
 * be the actor's to give (src/auth/delegation.ts).
 */
import type { ActionContext, ActionRequest, ParamsType, ResourceOptions } from 'adminjs';
import type { Model } from 'mongoose';
import type { DelegationGuard } from '../../auth/delegation-guard.js';
import type { GroupRecord, UserRecord } from '../../auth/models.js';
import type { RightsWatch } from '../../auth/rights-watch.js';
import { component } from '../components.js';
import type { AdminDeps } from '../deps.js';
import { actingAdminId, added, refusedOnForm } from './granted.js';
import { ServiceResource } from './mongoose-resource.js';
import { ACCESS_CONTROL } from './navigation.js';
import { normalizePermissions } from './permission-field.js';

export class GroupResource extends ServiceResource<GroupRecord> {
  constructor(
    model: Model<GroupRecord>,
    private readonly users: Model<UserRecord>,
    private readonly delegation: DelegationGuard,
    private readonly watchRights: RightsWatch,
  ) {
    super(model);
  }

  protected override async checkWrite(
    id: string | null,
    fields: Record<string, unknown>,
    context: ActionContext | undefined,
  ): Promise<void> {
    if (!('permissions' in fields)) return;
    const actor = actingAdminId(context);
    const current = id === null ? null : await this.model.findById(id, { permissions: 1 }).lean<GroupRecord>().exec();
    const codenames = added(fields.permissions, current?.permissions);
    await refusedOnForm('permissions', () => this.delegation.assertMayGrant(actor, codenames));
  }

  /** A permission taken from the group revokes the queued tasks of its members. */
  override update(id: string, params: Record<string, unknown>, context?: ActionContext): Promise<ParamsType> {
    return this.watchRights({ groups: id }, () => super.update(id, params, context));
  }

  override async delete(id: string): Promise<void> {
    await this.watchRights({ groups: id }, async () => {
      await super.delete(id);
      await this.users.updateMany({ groups: id }, { $pull: { groups: id } }).exec();
    });
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
