/**
 * Users in the admin site: list, create (with a password), edit (flags, groups, permissions,
 * optionally a new password), set password, clear login failures, delete. Usernames are unique
 * without case: a create or rename onto a name another account holds is refused under the field.
 *
 * Passwords: the stored hash never leaves the server (it is not selected, and dropped from every
 * record here) and is never written from a form field. A password typed in the "new" or "edit"
 * form (`newPassword`, a virtual field) is checked against the password rules and hashed in the
 * before-hook, and the hash reaches the database only through the request's context
 * (`serverFields`), which a form cannot set. The "set password" action uses the auth module's
 * own UserService.setPassword. A new password, however set, ends the user's signed links (they
 * carry a stamp of the hash, src/auth/credentials-stamp.ts); deactivating renews the user's
 * credentials generation, which ends them as well.
 *
 * Staff who are not superusers cannot grant superuser status or touch superuser accounts, and
 * grant permissions and group memberships, and set passwords, only as the delegation rules allow
 * (src/auth/delegation.ts): checked in the resource's write itself, whichever action writes, and
 * in the "set password" action.
 */
import { ValidationError, type ActionContext, type ActionRequest, type RecordActionResponse, type ResourceOptions } from 'adminjs';
import type { Model } from 'mongoose';
import type { DelegationGuard } from '../../auth/delegation-guard.js';
import { usernameKey, type TokenRecord, type UserRecord } from '../../auth/models.js';
import { newCredentialsGeneration } from '../../auth/credentials-stamp.js';
import { hashPassword, unusablePassword } from '../../auth/passwords.js';
import type { RightsWatch } from '../../auth/rights-watch.js';
import { weakPasswordError } from '../../auth/password-strength.js';
import { assertValidEmail, assertValidUsername } from '../../auth/user-fields.js';
import { isApiError } from '../../errors.js';
import { component } from '../components.js';
import { actorIsSuperuser, type ServiceAdmin } from '../current-admin.js';
import type { AdminDeps } from '../deps.js';
import { GrantHolderResource, type GrantChecks } from './grant-holder-resource.js';
import { actingAdminId, groupIds, refusedAsNotice, refusedOnForm } from './granted.js';
import { ACCESS_CONTROL } from './navigation.js';
import { normalizePermissions, type FormPayload } from './permission-field.js';

/** Stored fields no form may write. */
const SERVER_ONLY = ['_id', 'password', 'date_joined', 'last_login', 'credentials_generation', 'username_key'];

/**
 * What each role may write through the user form, by field: a payload key counts by its root
 * (`is_superuser`, `is_superuser.0`, `is_superuser[0]`, `groups.3` ...), so no flattened or nested
 * form of a field slips past the list. Everything else the form sends is dropped.
 */
const STAFF_WRITABLE = new Set(['username', 'email', 'first_name', 'last_name', 'is_active', 'is_staff', 'groups', 'permissions']);
const SUPERUSER_WRITABLE = new Set([...STAFF_WRITABLE, 'is_superuser']);

function fieldRoot(key: string): string {
  return key.split(/[.[]/, 1)[0] ?? key;
}

const NEW_USER_FIELDS = [
  'username',
  'newPassword',
  'email',
  'first_name',
  'last_name',
  'is_staff',
  'is_superuser',
  'groups',
  'permissions',
];

/** Password hashes made by a before-hook, waiting for the create/update of the same request. */
const pendingPasswords = new WeakMap<ActionContext, string>();

/** An edit that sets a new password revokes the user's API token once saved. */
function revokeTokenAfterNewPassword(deps: AdminDeps) {
  return async (response: RecordActionResponse, request: ActionRequest, context: ActionContext): Promise<RecordActionResponse> => {
    // A refused or invalid edit (any field error) wrote nothing, the password included.
    const saved = Object.keys(response.record?.errors ?? {}).length === 0;
    if (request.method === 'post' && pendingPasswords.has(context) && context.record !== undefined && saved) {
      await deps.models.Token.deleteMany({ user: String(context.record.id()) }).exec();
    }
    return response;
  };
}

export class UserResource extends GrantHolderResource<UserRecord> {
  constructor(
    model: Model<UserRecord>,
    private readonly tokens: Model<TokenRecord>,
    delegation: DelegationGuard,
    watchRights: RightsWatch,
  ) {
    super(model, delegation, watchRights);
  }

  protected override readonly grantChecks: GrantChecks = {
    permissions: (actor, codenames) => this.delegation.assertMayGrant(actor, codenames),
    groups: (actor, groups) => this.delegation.assertMayAddToGroups(actor, groupIds(groups)),
  };

  /**
   * Besides the grants (see GrantHolderResource), a new password for an existing account, and a
   * new name, must be the actor's to set.
   */
  protected override async checkWrite(
    id: string | null,
    fields: Record<string, unknown>,
    context: ActionContext | undefined,
  ): Promise<void> {
    if (id !== null && context !== undefined && pendingPasswords.has(context)) {
      await refusedOnForm('newPassword', () => this.delegation.assertMaySetPasswordOf(actingAdminId(context), id));
    }
    if (id !== null && context !== undefined && typeof fields.username === 'string') {
      const current = await this.model.findById(id, { username: 1 }).lean().exec();
      if (current !== null && current.username !== fields.username) {
        await refusedOnForm('username', () => this.delegation.assertMayRename(actingAdminId(context), id));
      }
    }
    if (typeof fields.username === 'string') await this.assertNameFree(id, fields.username);
    await super.checkWrite(id, fields, context);
  }

  /**
   * Usernames are unique without case: a new name that another account holds in any case is
   * refused under the field (the unique index would refuse it too, but say less).
   */
  private async assertNameFree(id: string | null, username: string): Promise<void> {
    const others = id === null ? {} : { _id: { $ne: id } };
    const taken = await this.model
      .findOne({ username_key: usernameKey(username), ...others }, { username: 1 })
      .lean()
      .exec();
    if (taken === null) return;
    const message = `A user named "${taken.username}" already exists (usernames are compared without case).`;
    throw new ValidationError({ username: { message, type: 'user_exists' } }, { message, type: 'user_exists' });
  }

  /** The user: deactivating them, or taking a permission, a group or superuser status away, revokes their queued tasks. */
  protected override holders(id: string) {
    return { _id: id };
  }

  /** A deleted user's API token goes with it. */
  protected override async deleteDependents(id: string): Promise<void> {
    await this.tokens.deleteMany({ user: id }).exec();
  }

  protected override toParams(document: Record<string, unknown>): Record<string, unknown> {
    const { password: _never, credentials_generation: _internal, username_key: _derived, ...rest } = document;
    return rest;
  }

  /** Stored secrets are never a search condition (a pattern on one would reveal it piece by piece). */
  protected override filterable(path: string): boolean {
    return !['password', 'credentials_generation'].some((hidden) => path === hidden || path.startsWith(`${hidden}.`));
  }

  protected override writableParams(params: Record<string, unknown>): Record<string, unknown> {
    return Object.fromEntries(Object.entries(params).filter(([key]) => !SERVER_ONLY.some((f) => key === f || key.startsWith(`${f}.`))));
  }

  /**
   * The password hash a before-hook made; and, when the write deactivates the account, a new
   * credentials generation, so the user's signed links stay dead if the account is enabled again.
   */
  protected override serverFields(context: ActionContext | undefined, fields: Record<string, unknown>): Record<string, unknown> {
    const hash = context === undefined ? undefined : pendingPasswords.get(context);
    return {
      ...(hash === undefined ? {} : { password: hash }),
      ...(fields.is_active === false ? { credentials_generation: newCredentialsGeneration() } : {}),
    };
  }
}

function fieldError(field: string, err: unknown): never {
  if (isApiError(err)) throw new ValidationError({ [field]: { message: err.message, type: err.code } });
  throw err;
}

/** Superusers may manage anyone; other staff only accounts that are not superusers. */
function mayManage(context: ActionContext): boolean {
  return actorIsSuperuser(context) || context.record?.params.is_superuser !== true;
}

function isSelf(context: ActionContext): boolean {
  return context.record !== undefined && String(context.record.id()) === (context.currentAdmin as ServiceAdmin | undefined)?.id;
}

/** Checks and prepares the "new"/"edit" form before it is saved (see the module comment). */
function beforeSave(deps: AdminDeps, creating: boolean) {
  return async (request: ActionRequest, context: ActionContext): Promise<ActionRequest> => {
    if (request.method !== 'post') return request;
    const submitted: FormPayload = { ...(request.payload ?? {}) };
    const writable = actorIsSuperuser(context) ? SUPERUSER_WRITABLE : STAFF_WRITABLE;
    let payload: FormPayload = Object.fromEntries(Object.entries(submitted).filter(([key]) => writable.has(fieldRoot(key))));

    const username = typeof payload.username === 'string' ? payload.username : String(context.record?.params.username ?? '');
    if (creating || payload.username !== undefined) {
      try {
        assertValidUsername(username);
      } catch (err) {
        fieldError('username', err);
      }
    }
    if (typeof payload.email === 'string') {
      payload.email = payload.email.trim();
      try {
        assertValidEmail(payload.email);
      } catch (err) {
        fieldError('email', err);
      }
    }

    const newPassword = submitted.newPassword;
    if (typeof newPassword === 'string' && newPassword !== '') {
      const weak = weakPasswordError(newPassword, username);
      if (weak !== null) throw new ValidationError({ newPassword: { message: weak.message, type: 'weak_password' } });
      pendingPasswords.set(context, await hashPassword(newPassword));
    } else if (creating) {
      // No password given: the account exists but cannot log in with one (token-only, or later).
      pendingPasswords.set(context, unusablePassword());
    }

    payload = await normalizePermissions(payload, deps.catalog);
    return { ...request, payload };
  };
}

export function userResource(deps: AdminDeps): { resource: UserResource; options: ResourceOptions } {
  return {
    resource: new UserResource(deps.models.User, deps.models.Token, deps.delegation, deps.watchRights),
    options: {
      navigation: ACCESS_CONTROL,
      sort: { sortBy: 'username', direction: 'asc' },
      listProperties: ['username', 'email', 'first_name', 'last_name', 'is_active', 'is_staff', 'is_superuser', 'last_login'],
      showProperties: [
        'username',
        'email',
        'first_name',
        'last_name',
        'is_active',
        'is_staff',
        'is_superuser',
        'groups',
        'permissions',
        'date_joined',
        'last_login',
        '_id',
      ],
      editProperties: [
        'username',
        'newPassword',
        'email',
        'first_name',
        'last_name',
        'is_active',
        'is_staff',
        'is_superuser',
        'groups',
        'permissions',
      ],
      filterProperties: ['username', 'email', 'is_active', 'is_staff', 'is_superuser', 'groups'],
      properties: {
        username: { isTitle: true },
        password: { isVisible: false },
        newPassword: {
          type: 'password',
          isVisible: { list: false, show: false, filter: false, edit: true },
          description:
            'Stored as a scrypt hash. On a new user, leave empty for an account that cannot log in with a password; when editing, leave empty to keep the current one.',
        },
        is_active: { description: 'Inactive accounts cannot log in and their tokens stop working; their signed links end for good.' },
        is_staff: { description: 'May log in to this administration site.' },
        is_superuser: { description: 'Has every permission without being granted it.' },
        groups: { description: 'The user also gets every permission of these groups.' },
        permissions: { components: { edit: component('PermissionsEdit') } },
        date_joined: { isDisabled: true },
        last_login: { isDisabled: true },
      },
      actions: {
        // New accounts are active; "Active" is offered when editing (an unticked box on a new
        // form would misstate the default).
        new: { before: [beforeSave(deps, true)], layout: NEW_USER_FIELDS },
        edit: { before: [beforeSave(deps, false)], after: [revokeTokenAfterNewPassword(deps)], isAccessible: mayManage },
        delete: { isAccessible: (context: ActionContext) => mayManage(context) && !isSelf(context) },
        bulkDelete: { isAccessible: actorIsSuperuser },
        clearLoginFailures: {
          actionType: 'record',
          icon: 'Unlock',
          component: component('ClearLoginFailures'),
          isAccessible: mayManage,
          handler: async (request: ActionRequest, _response: unknown, context: ActionContext) => {
            const record = context.record;
            if (record === undefined) throw new ValidationError({}, { message: 'No such user.' });
            if (request.method !== 'post') return { record: record.toJSON(context.currentAdmin) };
            const username = String(record.params.username);
            const cleared = await deps.loginFailures.clear({ username });
            return {
              record: record.toJSON(context.currentAdmin),
              notice: {
                message:
                  cleared === 0
                    ? `No failed logins were counted against ${username}.`
                    : `The failed logins counted against ${username} were cleared.`,
                type: 'success',
              },
            };
          },
        },
        setPassword: {
          actionType: 'record',
          icon: 'Key',
          component: component('SetPassword'),
          isAccessible: mayManage,
          handler: async (request: ActionRequest, _response: unknown, context: ActionContext) => {
            const record = context.record;
            if (record === undefined) throw new ValidationError({}, { message: 'No such user.' });
            if (request.method === 'post') {
              const username = String(record.params.username);
              const password = String(request.payload?.password ?? '');
              const confirm = String(request.payload?.confirm ?? '');
              if (password !== confirm) throw new ValidationError({ password: { message: 'The two passwords differ.', type: 'mismatch' } });
              const weak = weakPasswordError(password, username);
              if (weak !== null) throw new ValidationError({ password: { message: weak.message, type: 'weak_password' } });
              await refusedAsNotice(() => deps.delegation.assertMaySetPasswordOf(actingAdminId(context), String(record.id())));
              await deps.users.setPassword(username, password);
              return {
                record: record.toJSON(context.currentAdmin),
                notice: { message: `The password of ${username} was changed.`, type: 'success' },
              };
            }
            return { record: record.toJSON(context.currentAdmin) };
          },
        },
      },
    },
  };
}
