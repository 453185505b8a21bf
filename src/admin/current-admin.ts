/**
 * The logged-in administrator as AdminJS sees it (`currentAdmin` in every action's context and
 * in the top bar), made from the request's principal: AdminJS keeps no login state of its own.
 */
import type { CurrentAdmin } from 'adminjs';
import type { Principal } from '../auth/principal.js';
import { isTaskAdmin } from '../auth/permissions.js';

export interface ServiceAdmin extends CurrentAdmin {
  id: string;
  username: string;
  isSuperuser: boolean;
  /** Manages every account's tasks and schedules (superusers too), not only their own. */
  isTaskAdmin: boolean;
}

export function currentAdminFor(p: Principal): ServiceAdmin {
  const username = p.username ?? '';
  return {
    // AdminJS shows `email` as the account name in its top bar.
    email: username,
    title: p.isSuperuser ? 'Superuser' : 'Staff',
    id: p.userId ?? '',
    username,
    isSuperuser: p.isSuperuser,
    isTaskAdmin: isTaskAdmin(p),
  };
}

export function actorIsSuperuser(context: { currentAdmin?: CurrentAdmin | undefined }): boolean {
  return (context.currentAdmin as ServiceAdmin | undefined)?.isSuperuser === true;
}
