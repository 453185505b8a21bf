/**
 * API tokens in the admin site (authtoken_token, one per user). Only a hash and the first
 * characters of each key are stored (src/auth/api-tokens.ts): lists and detail pages show those
 * characters; the whole key is shown once, by the action that makes it ("Issue token" for a
 * user, "Rotate" on a token). Deleting revokes.
 *
 * Revocation and rotation take effect at once for new lookups; a process that cached the old
 * key (src/auth/accounts.ts) honours it for at most its cache lifetime (2 s).
 */
import type { ActionContext, ActionRequest, ResourceOptions } from 'adminjs';
import type { Types } from 'mongoose';
import type { TokenRecord } from '../../auth/models.js';
import { badRequest, forbidden, notFound } from '../../errors.js';
import { component } from '../components.js';
import { actorIsSuperuser } from '../current-admin.js';
import type { AdminDeps } from '../deps.js';
import { ServiceResource } from './mongoose-resource.js';
import { ACCESS_CONTROL } from './navigation.js';

export class TokenResource extends ServiceResource<TokenRecord> {
  /** The stored prefix, marked as one ("a1b2c3d4…"); the hash never leaves the server. */
  protected override toParams(document: Record<string, unknown>): Record<string, unknown> {
    const { key_hash: _hash, key_prefix: prefix, ...rest } = document;
    return { ...rest, key_prefix: typeof prefix === 'string' ? `${prefix}…` : '' };
  }

  /** Keys are only ever made by the issue and rotate actions. */
  protected override writableParams(): Record<string, unknown> {
    return {};
  }
}

interface IssuedKey {
  username: string;
  key: string;
}

/** Throws 403 unless the actor may manage tokens of this user (only superusers manage superusers'). */
async function assertMayManageTokenOf(deps: AdminDeps, userId: unknown, context: ActionContext): Promise<void> {
  if (actorIsSuperuser(context)) return;
  const user = await deps.models.User.findById(String(userId), { is_superuser: 1 }).lean().exec();
  if (user?.is_superuser) throw forbidden("Only a superuser may issue, rotate or revoke a superuser's token.", 'superuser_only');
}

/** Creates the user's token or replaces its key; only superusers may do it for superusers. */
async function issueFor(deps: AdminDeps, userId: Types.ObjectId | string, context: ActionContext): Promise<IssuedKey> {
  const user = await deps.models.User.findById(userId, { username: 1, is_superuser: 1 }).lean().exec();
  if (user === null) throw notFound('No such user.', 'no_such_user');
  await assertMayManageTokenOf(deps, user._id, context);
  // The same path as the API's rotation: stores only the hash, and this process forgets the old key at once.
  return { username: user.username, key: await deps.users.tokenFor(user.username) };
}

export function tokenResource(deps: AdminDeps): { resource: TokenResource; options: ResourceOptions } {
  return {
    resource: new TokenResource(deps.models.Token),
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
        delete: {
          guard: 'Revoke this token? Scripts using it stop working.',
          before: async (request: ActionRequest, context: ActionContext) => {
            await assertMayManageTokenOf(deps, context.record?.params.user, context);
            return request;
          },
        },
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
