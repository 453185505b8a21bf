/**
 * The permission catalog in the admin site (auth_permission: codename, readable name, area).
 * Codenames are made by the permission picker, not typed; only the readable name is editable.
 * Deleting a permission revokes it from every user and group that holds it.
 */
import type { ActionContext, ActionRequest, ResourceOptions } from 'adminjs';
import type { Model } from 'mongoose';
import type { GroupRecord, PermissionRecord, UserRecord } from '../../auth/models.js';
import { badRequest, notFound } from '../../errors.js';
import { component } from '../components.js';
import type { AdminDeps } from '../deps.js';
import { pickerChoices, pickerCollections } from '../picker/choices.js';
import { codenamesForGrant, parseGrantSpec } from '../picker/grant-codenames.js';
import { actingAdminId } from './granted.js';
import type { RightsWatch } from '../../auth/rights-watch.js';
import { ServiceResource } from './mongoose-resource.js';
import { ACCESS_CONTROL } from './navigation.js';

export class PermissionResource extends ServiceResource<PermissionRecord> {
  constructor(
    model: Model<PermissionRecord>,
    private readonly holders: { users: Model<UserRecord>; groups: Model<GroupRecord> },
    private readonly watchRights: RightsWatch,
  ) {
    super(model);
  }

  protected override writableParams(params: Record<string, unknown>): Record<string, unknown> {
    return typeof params.name === 'string' ? { name: params.name.trim() } : {};
  }

  override async delete(id: string): Promise<void> {
    const permission = await this.model.findById(id, { codename: 1 }).lean().exec();
    if (permission === null) {
      await super.delete(id);
      return;
    }
    const { codename } = permission;
    const groups = await this.holders.groups.find({ permissions: codename }, { _id: 1 }).lean().exec();
    const holders = { $or: [{ permissions: codename }, { groups: { $in: groups.map((g) => g._id) } }] };
    // Its holders' queued tasks are revoked.
    await this.watchRights(holders, async () => {
      await super.delete(id);
      const revoke = { $pull: { permissions: codename } };
      await Promise.all([
        this.holders.users.updateMany({ permissions: codename }, revoke).exec(),
        this.holders.groups.updateMany({ permissions: codename }, revoke).exec(),
      ]);
    });
  }
}

function parseSpecText(text: unknown) {
  if (typeof text !== 'string') throw badRequest('invalid_grant', 'The choice is missing.');
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw badRequest('invalid_grant', 'The choice is not valid JSON.');
  }
  return codenamesForGrant(parseGrantSpec(value));
}

const optionalName = (value: unknown): string | undefined => (typeof value === 'string' && value.trim() !== '' ? value.trim() : undefined);

/**
 * GET: the choices (op=choices), one database's collections (op=collections) or a preview; POST:
 * create and grant. Granting follows the delegation rules; creating a codename grants nothing.
 */
function pickerHandler(deps: AdminDeps) {
  return async (request: ActionRequest, _response: unknown, context: ActionContext) => {
    const query = request.query ?? {};
    if (request.method === 'get') {
      if (query.op === 'collections') return { collections: await pickerCollections(deps, query.area, query.database) };
      if (query.op === 'preview') {
        try {
          return { codenames: parseSpecText(query.spec), error: null };
        } catch (err) {
          return { codenames: [], error: err instanceof Error ? err.message : String(err) };
        }
      }
      return pickerChoices(deps);
    }
    const payload = request.payload ?? {};
    const parsed = parseSpecText(payload.spec);
    const codenames = parsed.map((p) => p.codename);
    const group = optionalName(payload.group);
    const username = optionalName(payload.user);
    // Both targets are checked before anything is written, so a typo changes nothing.
    const groupDoc = group === undefined ? null : await deps.models.Group.findOne({ name: group }, { _id: 1 }).lean().exec();
    if (group !== undefined && groupDoc === null) throw notFound(`No group named "${group}".`, 'no_such_group');
    const userDoc = username === undefined ? null : await deps.models.User.findOne({ username }, { _id: 1 }).lean().exec();
    if (username !== undefined && userDoc === null) throw notFound(`No user named "${username}".`, 'no_such_user');
    if (groupDoc !== null || userDoc !== null) await deps.delegation.assertMayGrant(actingAdminId(context), codenames);

    await deps.catalog.register(parsed);
    const grant = { $addToSet: { permissions: { $each: codenames } } };
    const grantedTo: string[] = [];
    if (groupDoc !== null) {
      await deps.models.Group.updateOne({ _id: groupDoc._id }, grant).exec();
      grantedTo.push(`group ${group}`);
    }
    if (userDoc !== null) {
      await deps.models.User.updateOne({ _id: userDoc._id }, grant).exec();
      grantedTo.push(`user ${username}`);
    }
    const summary =
      grantedTo.length > 0
        ? `Granted ${codenames.join(', ')} to ${grantedTo.join(' and ')}.`
        : `Created ${codenames.join(', ')} (not granted to anyone yet).`;
    return { codenames, grantedTo, summary, notice: { message: summary, type: 'success' } };
  };
}

export function permissionResource(deps: AdminDeps): { resource: PermissionResource; options: ResourceOptions } {
  return {
    resource: new PermissionResource(deps.models.Permission, { users: deps.models.User, groups: deps.models.Group }, deps.watchRights),
    options: {
      navigation: ACCESS_CONTROL,
      sort: { sortBy: 'codename', direction: 'asc' },
      listProperties: ['codename', 'name', 'area'],
      showProperties: ['codename', 'name', 'area', '_id'],
      editProperties: ['name'],
      filterProperties: ['codename', 'name', 'area'],
      properties: {
        codename: { isTitle: true },
        name: { description: 'A readable description shown next to the codename.' },
      },
      actions: {
        // New codenames come from the picker, which builds them from real names.
        new: { isAccessible: false, isVisible: false },
        delete: { guard: 'Delete this permission? It is revoked from every user and group that holds it.' },
        bulkDelete: { guard: 'Delete these permissions? They are revoked from every user and group that holds them.' },
        picker: {
          actionType: 'resource',
          icon: 'Plus',
          component: component('PermissionPicker'),
          handler: pickerHandler(deps),
        },
        codenames: {
          actionType: 'resource',
          isVisible: false,
          component: false,
          handler: async () => {
            const known = await deps.models.Permission.find({}, { codename: 1, name: 1 }).sort({ codename: 1 }).lean().exec();
            return { codenames: known.map((p) => ({ codename: p.codename, name: p.name })) };
          },
        },
      },
    },
  };
}
