/**
 * Compose runtime: the API's and the workers' database users, created or brought to the
 * passwords in secrets.env (the image's init script creates them only on a blank volume). In the
 * local runtime the supervisor does this each time it starts the database.
 */
import { ensureDatabaseUsers } from '../../installation/database-users.js';
import { hostMongoClient } from '../../installation/host-connections.js';
import type { InstallContext, Step } from '../step.js';

export const databaseUsers: Step = {
  id: 'database-users',
  title: 'Database users',
  phase: 'apply',
  relevantServices: ['mongo'],
  skip: (ctx) => (ctx.noStart ? '--no-start' : ctx.config.runtime !== 'compose' ? 'managed by the local supervisor' : undefined),
  async run(ctx: InstallContext) {
    const admin = hostMongoClient(ctx.layout, ctx.config, ctx.secrets!, { who: 'admin', timeoutMs: 30_000 });
    try {
      const actions = await ensureDatabaseUsers(admin, ctx.secrets!);
      return `api ${actions.api}, worker ${actions.worker}`;
    } finally {
      await admin.close();
    }
  },
};
