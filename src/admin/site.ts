/**
 * Builds the AdminJS instance and its routes. Loaded on demand by index.ts (importing AdminJS
 * takes a couple of seconds), after ADMIN_JS_TMP_DIR has been pointed at the bundle directory.
 *
 * AdminJS's own login is not used: access is decided by index.ts/access.ts from our session,
 * and AdminJS's login/logout links point at the API's login and logout pages.
 */
import AdminJS, { type AdminJSOptions } from 'adminjs';
import type { Router } from 'express';
import type { AdminContext } from './context.js';
import { ADMIN_ROOT, LOGIN_PATH, LOGOUT_PATH } from './access.js';
import { ensureComponentsBundle } from './bundle.js';
import { component } from './components.js';
import type { AdminDeps } from './deps.js';
import { adminLocale } from './locale.js';
import { groupResource } from './resources/groups.js';
import { permissionResource } from './resources/permissions.js';
import { NO_TASK_LOG, taskLogResource, type TaskLogSource } from './resources/task-log.js';
import { NO_SCHEDULES, scheduleResource, type ScheduleSource } from './resources/schedules.js';
import { tokenResource } from './resources/tokens.js';
import { userResource } from './resources/users.js';
import { adminRouter, type AdminRouterOptions } from './router.js';
import { currentAdminFor } from './current-admin.js';
import { rightsWatch, type RightsLostListener } from '../auth/rights-watch.js';

export interface AdminSiteConfig {
  bundleDir: string;
  taskNames: (() => Promise<string[]>) | undefined;
  /** The administrator a request stands for (default: from its principal). */
  currentAdmin?: AdminRouterOptions['currentAdmin'];
}

function adminOptions(deps: AdminDeps, taskLog: TaskLogSource, schedules: ScheduleSource): AdminJSOptions {
  return {
    rootPath: ADMIN_ROOT,
    loginPath: LOGIN_PATH,
    logoutPath: LOGOUT_PATH,
    branding: { companyName: deps.title, logo: false, withMadeWithLove: false },
    locale: adminLocale(),
    resources: [
      userResource(deps),
      groupResource(deps),
      permissionResource(deps),
      tokenResource(deps),
      taskLogResource(taskLog),
      scheduleResource(schedules),
    ],
    dashboard: {
      component: component('Dashboard'),
      handler: async () => {
        const [users, groups, permissions, tokens, taskRuns] = await Promise.all([
          deps.models.User.estimatedDocumentCount().exec(),
          deps.models.Group.estimatedDocumentCount().exec(),
          deps.models.Permission.estimatedDocumentCount().exec(),
          deps.models.Token.estimatedDocumentCount().exec(),
          taskLog.estimatedLogSize(),
        ]);
        return { title: deps.title, rootPath: ADMIN_ROOT, counts: { users, groups, permissions, tokens, taskRuns } };
      },
    },
    // Workers, queues, task outcomes and failures; its data comes from operations/routes.ts.
    // A data-store or catalog collection's indexes; data from indexes/routes.ts.
    // The manual the service serves at /api/manual/, in every admin page's sidebar.
    pages: {
      operations: { component: component('Operations'), icon: 'Activity' },
      indexes: { component: component('Indexes'), icon: 'List' },
      manual: { component: component('Manual'), icon: 'BookOpen' },
    },
  };
}

/**
 * Revokes the queued tasks of users who lost rights through an admin change. The change itself
 * stands when revoking fails (it is logged): the revocation is recorded in the results first,
 * which workers read before starting a task, so only the broadcast to running workers can miss.
 */
function revokeQueuedTasks(ctx: AdminContext): RightsLostListener | undefined {
  const queue = ctx.queue;
  if (queue === undefined) return undefined;
  return async (userIds) => {
    try {
      await queue.revokeQueuedTasksOf(userIds);
    } catch (err) {
      ctx.logger.error({ err, users: userIds }, 'could not revoke the queued tasks of users who lost rights');
    }
  };
}

export async function createAdminRouter(ctx: AdminContext, config: AdminSiteConfig): Promise<Router> {
  const { models } = ctx.auth;
  const deps: AdminDeps = {
    title: ctx.settings.applicationTitle,
    models,
    users: ctx.auth.users,
    catalog: ctx.auth.permissionCatalog,
    delegation: ctx.auth.delegation,
    loginFailures: ctx.auth.loginFailures,
    areas: ctx.documents,
    taskNames: config.taskNames,
    watchRights: rightsWatch(models, revokeQueuedTasks(ctx)),
  };
  const bundle = await ensureComponentsBundle(config.bundleDir);
  if (bundle.built) ctx.logger.info({ file: bundle.file }, 'admin site: components bundle built');
  const admin = new AdminJS(adminOptions(deps, ctx.queue ?? NO_TASK_LOG, ctx.schedules ?? NO_SCHEDULES));
  return adminRouter(admin, {
    title: deps.title,
    componentsBundle: bundle.file,
    currentAdmin: config.currentAdmin ?? ((req) => currentAdminFor(req.principal)),
  });
}
