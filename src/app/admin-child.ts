/**
 * The admin process's entry (src/admin/process/): the service's context on the API's settings,
 * AdminJS on it, served on the Unix socket the API named. Started by the API on the first admin
 * page, stopped by it when idle; it stops by itself when the API goes away.
 */
import { once } from 'node:events';
import { createServer } from 'node:http';
import { loadSettings } from '../config/settings.js';
import { createLogger } from '../log/logger.js';
import { adminProcessApp, forwardedAdmin } from '../admin/process/child-app.js';
import { READY_MESSAGE, SOCKET_ENV } from '../admin/process/admin-process.js';
import { createServiceContext, registeredTaskNames } from './service-context.js';
import { errorHandler, notFoundHandler } from './error-handler.js';

const socketPath = process.env[SOCKET_ENV];
if (socketPath === undefined || socketPath === '' || process.send === undefined) {
  console.error(`This is the admin site's process, started by the API (it needs ${SOCKET_ENV} and the API at the other end).`);
  process.exit(2);
}

const settings = loadSettings(process.env);
const logger = createLogger(settings.logLevel, 'cybercom-admin');
// AdminJS reads its working directory from the environment when first imported.
process.env.ADMIN_JS_TMP_DIR ??= settings.adminBundleDir;
const ctx = await createServiceContext(settings, logger);
const { createAdminRouter } = await import('../admin/site.js');
const adminjs = await createAdminRouter(ctx, {
  bundleDir: settings.adminBundleDir,
  taskNames: ctx.queue === undefined ? undefined : () => registeredTaskNames(ctx),
  currentAdmin: forwardedAdmin,
});
const server = createServer(
  adminProcessApp(adminjs, { notFound: notFoundHandler(), errors: errorHandler(logger, settings.debug, ctx.storage) }),
);
server.listen(socketPath);
await once(server, 'listening');

let stopping = false;
const stop = (why: string): void => {
  if (stopping) return;
  stopping = true;
  logger.info({ why }, 'admin process stopping');
  server.close();
  server.closeIdleConnections();
  const forced = setTimeout(() => process.exit(1), 10_000);
  forced.unref();
  ctx.close().then(
    () => process.exit(0),
    (err: unknown) => {
      logger.error({ err }, 'admin process: closing failed');
      process.exit(1);
    },
  );
};
process.once('SIGTERM', () => stop('SIGTERM'));
process.once('SIGINT', () => stop('SIGINT'));
// The API went away without stopping this process first.
process.once('disconnect', () => stop('the API process is gone'));
process.send({ type: READY_MESSAGE });
