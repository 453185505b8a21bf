/**
 * The `permissions` field of user and group forms: a list of codenames (flattened by AdminJS as
 * `permissions.0`, `permissions.1`, … or an empty list). Each is checked against the codename
 * rules (an old-style codename with one meaning is stored in the canonical form) and registered
 * in the permission catalog, so what was granted can be picked again.
 */
import { ValidationError, flat, type ActionRequest } from 'adminjs';
import type { PermissionCatalog } from '../../auth/permission-catalog.js';
import { isApiError } from '../../errors.js';

/** A submitted AdminJS form: flattened keys, values as the form sent them. */
export type FormPayload = NonNullable<ActionRequest['payload']>;

/** Returns the payload with `permissions` as a clean, de-duplicated list (unchanged when absent). */
export async function normalizePermissions(payload: FormPayload, catalog: PermissionCatalog): Promise<FormPayload> {
  const raw: unknown = flat.get(payload, 'permissions');
  if (raw === undefined) return payload;
  const list = raw === null || raw === '' ? [] : Array.isArray(raw) ? raw : [raw];
  const codenames = list.filter((c): c is string => typeof c === 'string' && c.trim() !== '').map((c) => c.trim());
  let parsed;
  try {
    parsed = await catalog.normalize(codenames);
  } catch (err) {
    if (isApiError(err)) throw new ValidationError({ permissions: { message: err.message, type: 'invalid_permission' } });
    throw err;
  }
  await catalog.register(parsed);
  return flat.set(
    payload,
    'permissions',
    parsed.map((p) => p.codename),
  );
}
