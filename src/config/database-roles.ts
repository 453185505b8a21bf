/**
 * The name of the custom role workers hold on MongoDB. It is a setting's default (WORKER_DB_ROLE)
 * as well as part of the role documents in src/db/worker-role.ts, so it lives with the settings,
 * below the data layer that uses it.
 */
export const WORKER_ROLE = 'cybercom-worker-data';
