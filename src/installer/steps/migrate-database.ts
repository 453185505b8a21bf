/**
 * Local runtime, upgrade from an installation whose database is in FerretDB v1's SQLite files:
 * copies every application database into the current engine and verifies it (see
 * installation/database-migration) before services start, so the new engine never serves an
 * empty database. Running services of the previous version are stopped first. The old files are
 * kept; the outcome and the summary say where, and that the operator may delete them.
 */
import { existsSync } from 'node:fs';
import { legacyDatabasePaths, legacyMigrationPending, migrateLegacyDatabase } from '../../installation/database-migration.js';
import { openRuntime } from '../../installation/runner/open-runtime.js';
import type { InstallContext, Step } from '../step.js';

const plural = (n: number, word: string): string => `${n} ${word}${n === 1 ? '' : 's'}`;

export const migrateDatabase: Step = {
  id: 'migrate-database',
  title: 'Database migration from FerretDB v1',
  phase: 'apply',
  skip(ctx) {
    if (ctx.config.runtime !== 'local') return 'compose runtime';
    if (!legacyMigrationPending(ctx.layout)) {
      const kept = legacyDatabasePaths(ctx.layout).keptDir;
      return existsSync(kept) ? `done earlier; the old files are still kept in ${kept}` : 'no FerretDB v1 data';
    }
    // Migrating means stopping the services: --no-start leaves them (and the data) as they are.
    if (ctx.noStart) return '--no-start (the next run without it migrates; the database does not start before)';
    return undefined;
  },
  async run(ctx: InstallContext) {
    const runtime = await openRuntime(ctx.layout, ctx.config);
    ctx.runtime = runtime;
    if (await runtime.isRunning()) {
      ctx.progress.detail('stopping the running services (their database is migrated while they are down)');
      await runtime.stop();
    }
    const record = await migrateLegacyDatabase({
      layout: ctx.layout,
      config: ctx.config,
      secrets: ctx.secrets!,
      progress: (text) => ctx.progress.detail(text),
      log: (text) => ctx.progress.logOnly(text),
    });
    const { databases, collections, documents } = record.totals;
    const counts = `${plural(databases, 'database')}, ${plural(collections, 'collection')}, ${plural(documents, 'document')}`;
    const skipped = Object.entries(record.skipped).map(
      ([name, count]) => `Not copied: ${name} (${count} browser sessions; users log in again)`,
    );
    const marker = legacyDatabasePaths(ctx.layout).marker;
    ctx.summary.push(
      `Database: migrated from ${record.from.engine}: ${counts}, counts and content hashes verified (${marker})`,
      ...skipped,
      `Old FerretDB v1 data kept in ${record.oldData} (no longer used): delete it once you no longer need it (rm -rf ${record.oldData})`,
    );
    return `migrated ${counts} (verified); old data kept in ${record.oldData}`;
  },
};
