/**
 * API tokens in the admin site (authtoken_token, one per user). Only a hash and the first
 * characters of each key are stored (src/auth/api-tokens.ts): lists and detail pages show those
 * characters; the whole key is shown once, by the action that makes it ("Issue token" for a
 * user, "Rotate" on a token). Deleting revokes.
 *
 * Revocation and rotation take effect at once for new lookups; a process that cached the old
 * key (src/auth/accounts.ts) honours it for at most its cache lifetime (2 s). Both also end every
 * signed link the token's user made.
 */
import type { ActionContext, ActionRequest, BaseRecord, Filter, ResourceOptions } from 'adminjs';
import type { Model, Types } from 'mongoose';
import type { DelegationGuard } from '../../auth/delegation-guard.js';
import { mayManageTokenOf } from '../../auth/delegation.js';
import type { TokenRecord } from '../../auth/models.js';
import type { UserService } from '../../auth/module.js';
import { badRequest, notFound } from '../../errors.js';
import { component } from '../components.js';
import type { ServiceAdmin } from '../current-admin.js';
import type { AdminDeps } from '../deps.js';
import { actingAdminId, refusedAsNotice } from './granted.js';
import { ServiceResource } from './mongoose-resource.js';
import { ACCESS_CONTROL } from './navigation.js';

/** The acting administrator as the read filter needs it; none sees nothing. */
function viewer(context: ActionContext | undefined): { id: string; isSuperuser: boolean } {
  const admin = context?.currentAdmin as ServiceAdmin | undefined;
  return { id: admin?.id ?? '', isSuperuser: admin?.isSuperuser === true };
}

/**
 * Lists, pages and lookups show superusers every token and other staff only their own: a
 * token's owner and age say whom a script acts for, which is the owner's business.
 */
export class TokenResource extends ServiceResource<TokenRecord> {
  constructor(
    model: Model<TokenRecord>,
    private readonly delegation: DelegationGuard,
    private readonly users: Pick<UserService, 'endSignedLinks'>,
  ) {
    super(model);
  }

  /** The stored prefix, marked as one ("a1b2c3d4…"); the hash never leaves the server. */
  protected override toParams(document: Record<string, unknown>): Record<string, unknown> {
    const { key_hash: _hash, key_prefix: prefix, ...rest } = document;
    return { ...rest, key_prefix: typeof prefix === 'string' ? `${prefix}…` : '' };
  }

  /** Keys are only ever made by the issue and rotate actions. */
  protected override writableParams(): Record<string, unknown> {
    return {};
  }

  /** The filter narrowed to what the viewer may see, or null when that is nothing. */
  private visible(filter: Filter, context: ActionContext | undefined): Filter | null {
    const who = viewer(context);
    if (who.isSuperuser) return filter;
    const asked = filter.get('user')?.value;
    if (who.id === '' || (asked !== undefined && String(asked) !== who.id)) return null;
    filter.filters.user = { path: 'user', property: this.property('user'), value: who.id };
    return filter;
  }

  private mayView(record: BaseRecord | null, context: ActionContext | undefined): boolean {
    const who = viewer(context);
    return record !== null && who.id !== '' && mayManageTokenOf(who, String(record.params.user));
  }

  override async find(
    filter: Parameters<ServiceResource['find']>[0],
    options: Parameters<ServiceResource['find']>[1],
    context?: ActionContext,
  ): Promise<BaseRecord[]> {
    const narrowed = this.visible(filter as Filter, context);
    return narrowed === null ? [] : super.find(narrowed, options);
  }

  override async count(filter: Filter, context?: ActionContext): Promise<number> {
    const narrowed = this.visible(filter, context);
    return narrowed === null ? 0 : super.count(narrowed);
  }

  override async findOne(id: string, context?: ActionContext): Promise<BaseRecord> {
    const record = await super.findOne(id);
    // AdminJS treats a null record as "not found" (see ServiceResource.findOne).
    return this.mayView(record, context) ? record : (null as unknown as BaseRecord);
  }

  override async findMany(ids: (string | number)[], context?: ActionContext): Promise<BaseRecord[]> {
    return (await super.findMany(ids)).filter((record) => this.mayView(record, context));
  }

  /** Revoking: the owner or a superuser only, whichever action asks. */
  override async delete(id: string, context?: ActionContext): Promise<void> {
    const token = await this.model.findById(id, { user: 1 }).lean<TokenRecord>().exec();
    if (token === null) return;
    await refusedAsNotice(() => this.delegation.assertMayManageTokenOf(actingAdminId(context), String(token.user)));
    await super.delete(id);
    await this.users.endSignedLinks(String(token.user));
  }
}

interface IssuedKey {
  username: string;
  key: string;
}

/** Creates the user's token or replaces its key; only the user and superusers may. */
async function issueFor(deps: AdminDeps, userId: Types.ObjectId | string, context: ActionContext): Promise<IssuedKey> {
  const user = await deps.models.User.findById(userId, { username: 1 }).lean().exec();
  if (user === null) throw notFound('No such user.', 'no_such_user');
  await deps.delegation.assertMayManageTokenOf(actingAdminId(context), user._id.toString());
  // The same path as the API's rotation: stores only the hash, and this process forgets the old key at once.
  return { username: user.username, key: await deps.users.tokenFor(user.username) };
}

export function tokenResource(deps: AdminDeps): { resource: TokenResource; options: ResourceOptions } {
  return {
    resource: new TokenResource(deps.models.Token, deps.delegation, deps.users),
    options: {
      navigation: ACCESS_CONTROL,
      sort: { sortBy: 'created', direction: 'desc' },
      listProperties: ['user', 'key_prefix', 'created'],
      showProperties: ['user', 'key_prefix', 'created', '_id'],
      filterProperties: ['user', 'created'],
      properties: {
        key_prefix: { description: 'Only the first characters are stored; the whole key is shown once, when it is made.' },
      },
      actions: {
        new: { isAccessible: false, isVisible: false },
        edit: { isAccessible: false, isVisible: false },
        delete: { guard: 'Revoke this token? Scripts using it stop working.' },
        // One token at a time, so each revocation passes the check above.
        bulkDelete: { isAccessible: false, isVisible: false },
        issue: {
          actionType: 'resource',
          icon: 'Plus',
          component: component('TokenKey'),
          handler: async (request: ActionRequest, _response: unknown, context: ActionContext) => {
            if (request.method !== 'post') return {};
            const username = typeof request.payload?.username === 'string' ? request.payload.username.trim() : '';
            if (username === '') throw badRequest('missing_field', 'Enter the username.');
            const user = await deps.models.User.findOne({ username }, { _id: 1 }).lean().exec();
            if (user === null) throw notFound(`No user named "${username}".`, 'no_such_user');
            const issued = await issueFor(deps, user._id, context);
            return { issued, notice: { message: `A new API token was issued for ${issued.username}.`, type: 'success' } };
          },
        },
        rotate: {
          actionType: 'record',
          icon: 'RefreshCw',
          component: component('TokenKey'),
          handler: async (request: ActionRequest, _response: unknown, context: ActionContext) => {
            const record = context.record;
            if (record === undefined) throw notFound('No such token.', 'no_such_token');
            if (request.method !== 'post') return { record: record.toJSON(context.currentAdmin) };
            const issued = await issueFor(deps, String(record.params.user), context);
            return {
              record: record.toJSON(context.currentAdmin),
              issued,
              notice: { message: `The API token of ${issued.username} was rotated.`, type: 'success' },
            };
          },
        },
      },
    },
  };
}
