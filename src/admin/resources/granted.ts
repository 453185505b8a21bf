/**
 * What a user or group form would newly grant, and the delegation guard's refusals as AdminJS
 * shows them: on the form (a ValidationError: the message on top, the field marked), or as an
 * error notice for actions without a form (a ForbiddenError), never as a server error.
 */
import { ForbiddenError, ValidationError, type ActionContext } from 'adminjs';
import { isValidObjectId } from 'mongoose';
import { isApiError } from '../../errors.js';
import type { ServiceAdmin } from '../current-admin.js';

/** A list field as written (array, single value, or '' / absent for none), as strings. */
export function listOf(value: unknown): string[] {
  if (value === undefined || value === null || value === '') return [];
  const list: unknown[] = Array.isArray(value) ? value : [value];
  return list.filter((v) => v !== null && v !== undefined && v !== '').map(String);
}

/** The entries of `next` that `current` does not have: what a write would add. */
export function added(next: unknown, current: readonly unknown[] | undefined): string[] {
  const had = new Set((current ?? []).map(String));
  return [...new Set(listOf(next))].filter((v) => !had.has(v));
}

/** Group ids among `ids` that can name a group (others fail the write's own cast check). */
export function groupIds(ids: readonly string[]): string[] {
  return ids.filter((id) => isValidObjectId(id));
}

/** The acting administrator's account id; an action without one may change nothing. */
export function actingAdminId(context: ActionContext | undefined): string {
  const id = (context?.currentAdmin as ServiceAdmin | undefined)?.id;
  if (id === undefined || id === '') throw new ValidationError({}, { message: 'No administrator is logged in.', type: 'forbidden' });
  return id;
}

/** Runs a delegation check; its refusal becomes a form error under `field`. */
export async function refusedOnForm(field: string, check: () => Promise<void>): Promise<void> {
  try {
    await check();
  } catch (err) {
    if (!isApiError(err)) throw err;
    throw new ValidationError({ [field]: { message: err.message, type: err.code } }, { message: err.message, type: err.code });
  }
}

/** Runs a delegation check; its refusal becomes AdminJS's error notice. */
export async function refusedAsNotice(check: () => Promise<void>): Promise<void> {
  try {
    await check();
  } catch (err) {
    if (!isApiError(err)) throw err;
    throw new ForbiddenError(err.message);
  }
}
