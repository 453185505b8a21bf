/**
 * The data-store permissions of the user who submitted a task, carried in the task message (a
 * custom header beside `authenticated_user`), so that a worker checks them without reading the
 * service's users and groups: the worker's database login then needs no access to the
 * collections holding users, groups, tokens and sessions at all.
 *
 * Only what the data-store check asks is sent: the superuser flag and the user's effective
 * `data_store.*` codenames (their own plus their groups'), as the API resolved them for the
 * request that submitted the task.
 *
 * Trusting the message is no weaker than what it replaces. The worker used to look up whichever
 * username `authenticated_user` named, and anyone able to publish to the broker can put any
 * username there — a superuser's included — so such a publisher could already act with any
 * user's data-store permissions, up to full access. Claiming permissions directly reaches no
 * further: the same full access at most, and the databases kept from every task stay closed.
 * A message without this header (a stock Celery client, an older API) gets no data-store access
 * through the permission check.
 */
import type { HeaderValue } from './task-message.js';
import isPlainObject from 'is-plain-obj';

export const SUBMITTER_ACCESS_HEADER = 'authenticated_user_access';

const DATA_STORE_PREFIX = 'data_store.';

export interface SubmitterAccess {
  /** The user the facts belong to; they count only for a task whose `authenticated_user` is the same. */
  username: string;
  isSuperuser: boolean;
  /** Effective `data_store.*` codenames. */
  dataStorePermissions: string[];
}

/** The access to send for a user, from what the API resolved for the request (a Principal's fields). */
/**
 * The data-store codenames of each permission set seen, for as long as the set lives: an account
 * is loaded once and reused for a while, so its submissions share one filtered, sorted list
 * instead of building it again for every task they run.
 */
const dataStoreCodes = new WeakMap<Iterable<string>, string[]>();

/** Shared by every submission of the account: read, never changed. */
function dataStorePermissionsOf(permissions: Iterable<string>): string[] {
  let codes = dataStoreCodes.get(permissions);
  if (codes === undefined) {
    codes = [...permissions].filter((code) => code.startsWith(DATA_STORE_PREFIX)).sort();
    dataStoreCodes.set(permissions, codes);
  }
  return codes;
}

export function submitterAccessOf(facts: { username: string; isSuperuser: boolean; permissions: Iterable<string> }): SubmitterAccess {
  return {
    username: facts.username,
    isSuperuser: facts.isSuperuser,
    dataStorePermissions: dataStorePermissionsOf(facts.permissions),
  };
}

export function encodeSubmitterAccess(access: SubmitterAccess): Record<string, HeaderValue> {
  return {
    [SUBMITTER_ACCESS_HEADER]: {
      user: access.username,
      is_superuser: access.isSuperuser,
      data_store_permissions: access.dataStorePermissions,
    },
  };
}

/**
 * The access the message carries for `authenticatedUser`, or null when there is none, it is
 * malformed, or it names another user. Anything not exactly as the API writes it counts as absent.
 */
export function decodeSubmitterAccess(headers: Record<string, HeaderValue>, authenticatedUser: string | null): SubmitterAccess | null {
  const value = headers[SUBMITTER_ACCESS_HEADER];
  if (authenticatedUser === null || !isPlainObject(value)) return null;
  const { user, is_superuser: isSuperuser, data_store_permissions: permissions } = value;
  if (user !== authenticatedUser || typeof isSuperuser !== 'boolean' || !Array.isArray(permissions)) return null;
  if (!permissions.every((code): code is string => typeof code === 'string' && code.startsWith(DATA_STORE_PREFIX))) return null;
  return { username: user, isSuperuser, dataStorePermissions: permissions };
}
