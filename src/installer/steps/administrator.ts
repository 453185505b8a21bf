/**
 * The web site's administrator: created when missing, otherwise updated (e-mail, superuser
 * flags, and the password when one was given). Without a given password a new administrator gets
 * a generated one, shown once on the terminal and stored nowhere; an existing one keeps theirs.
 * Works from the host for both runtimes (the database port is published), with the API's
 * identity and the auth module the API itself uses.
 */
import { randomBytes } from 'node:crypto';
import { createAuthModule } from '../../auth/index.js';
import { loadSettings } from '../../config/settings.js';
import { connectMongo } from '../../db/mongo-client.js';
import { createLogger } from '../../log/logger.js';
import { hostServiceEnv } from '../../installation/env-files.js';
import type { InstallContext, Step } from '../step.js';

export function generatePassword(): string {
  return randomBytes(15).toString('base64url');
}

export const administrator: Step = {
  id: 'administrator',
  title: 'Administrator account',
  phase: 'apply',
  relevantServices: ['database', 'mongo'],
  skip: (ctx) => (ctx.noStart ? '--no-start' : undefined),
  async run(ctx: InstallContext) {
    // The host's view of the API settings: local paths and the published database port.
    const settings = loadSettings(hostServiceEnv(ctx.layout, ctx.config, ctx.secrets!));
    const mongo = await connectMongo(settings.privateMongo);
    try {
      const auth = await createAuthModule({
        settings,
        logger: createLogger('warn', 'installer'),
        mongo,
        db: mongo.db(settings.serviceDatabase),
      });
      try {
        const { username, email } = ctx.config.admin;
        const exists = (await auth.models.User.exists({ username })) !== null;
        if (exists && ctx.adminPassword === undefined) {
          await auth.models.User.updateOne({ username }, { $set: { email, is_superuser: true, is_staff: true, is_active: true } }).exec();
          ctx.summary.push(`Administrator: ${username} (password unchanged)`);
          return 'exists, password kept';
        }
        const password = ctx.adminPassword ?? generatePassword();
        await auth.users.ensureSuperuser({ username, email, password });
        if (ctx.adminPassword === undefined) {
          ctx.progress.secret(
            `      Administrator "${username}" password: ${password}   (shown once, stored nowhere: note it now)`,
            `      administrator "${username}" password generated (not logged)`,
          );
          ctx.summary.push(`Administrator: ${username} (generated password shown above)`);
        } else {
          ctx.summary.push(`Administrator: ${username} (password as given)`);
        }
        return exists ? 'updated' : 'created';
      } finally {
        await auth.close();
      }
    } finally {
      await mongo.close();
    }
  },
};
