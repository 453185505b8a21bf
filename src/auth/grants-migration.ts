/**
 * Start-up migration of legacy permission codenames (see legacy-grants.ts) on users, groups and
 * the Permission catalog to the canonical form of grants.ts. Idempotent: canonical codenames
 * are left alone, so a second run, or two processes starting together, change nothing more.
 *
 * A legacy codename becomes every meaning that exists now, or every possible meaning when none
 * does, so no one loses anything they could do before; each one kept with more than one meaning
 * is logged so an administrator can narrow it down. A task codename that matches no known task
 * stays as it is (a deprecated grant, matched the old way). Codenames that are neither canonical
 * nor legacy, or legacy ones with no possible meaning, never granted anything: they are left as
 * they are and logged.
 */
import type { Types } from 'mongoose';
import type { Logger } from '../log/logger.js';
import type { AuthModels } from './models.js';
import { describeCodename } from './codenames.js';
import { decodeGrant, encodeGrant } from './grants.js';
import { LegacyGrantResolver, parseLegacyCodename, type GrantTargets, type Resolution } from './legacy-grants.js';
import type { PermissionCatalog } from './permission-catalog.js';

export interface GrantsMigrationReport {
  users: number;
  groups: number;
  /** Legacy codenames rewritten (each to one or more canonical ones). */
  converted: number;
  /** Legacy codenames now standing for more than one grant. */
  ambiguous: number;
  /** Legacy task codenames kept as they are (deprecated). */
  legacyTasks: number;
}

/** How many holders a log line names before it only counts them. */
const NAMED_HOLDERS = 20;

interface Holder {
  _id: Types.ObjectId;
  permissions: string[];
  label: string;
}

/** What to store instead of a legacy codename, or null to leave it as it is. */
function replacement(resolution: Resolution | undefined): string[] | null {
  if (resolution === undefined || resolution.grants.length === 0) return null;
  if (resolution.grants.every((g) => g.kind === 'legacy_task')) return null;
  return resolution.grants.map(encodeGrant);
}

function rewrite(codenames: readonly string[], resolutions: ReadonlyMap<string, Resolution>): string[] {
  const out: string[] = [];
  for (const codename of codenames) out.push(...(replacement(resolutions.get(codename)) ?? [codename]));
  return [...new Set(out)];
}

const sameList = (a: readonly string[], b: readonly string[]): boolean => a.length === b.length && a.every((v, i) => v === b[i]);

function named(labels: string[]): { holders: string[]; more?: number } {
  return labels.length > NAMED_HOLDERS
    ? { holders: labels.slice(0, NAMED_HOLDERS), more: labels.length - NAMED_HOLDERS }
    : { holders: labels };
}

export async function migrateLegacyGrants(
  models: AuthModels,
  catalog: PermissionCatalog,
  targets: GrantTargets | undefined,
  logger: Logger,
): Promise<GrantsMigrationReport> {
  const withPermissions = { 'permissions.0': { $exists: true } };
  const [users, groups, known] = await Promise.all([
    models.User.find(withPermissions, { username: 1, permissions: 1 }).lean().exec(),
    models.Group.find(withPermissions, { name: 1, permissions: 1 }).lean().exec(),
    models.Permission.find({}, { codename: 1 }).lean().exec(),
  ]);
  const holders: { model: 'User' | 'Group'; holder: Holder }[] = [
    ...users.map((u) => ({ model: 'User' as const, holder: { _id: u._id, permissions: u.permissions, label: `user ${u.username}` } })),
    ...groups.map((g) => ({ model: 'Group' as const, holder: { _id: g._id, permissions: g.permissions, label: `group ${g.name}` } })),
  ];

  // Every codename that is not canonical, with who holds it.
  const heldBy = new Map<string, string[]>();
  const note = (codename: string, label?: string): void => {
    if (decodeGrant(codename) !== null) return;
    const labels = heldBy.get(codename) ?? [];
    if (label !== undefined) labels.push(label);
    heldBy.set(codename, labels);
  };
  for (const { holder } of holders) for (const codename of holder.permissions) note(codename, holder.label);
  for (const p of known) note(p.codename);

  const resolver = new LegacyGrantResolver(targets);
  const resolutions = new Map<string, Resolution>();
  const report: GrantsMigrationReport = { users: 0, groups: 0, converted: 0, ambiguous: 0, legacyTasks: 0 };
  for (const [codename, labels] of heldBy) {
    const legacy = parseLegacyCodename(codename);
    const resolution = legacy === null ? undefined : await resolver.resolve(legacy);
    if (resolution !== undefined) resolutions.set(codename, resolution);
    const canonical = replacement(resolution);
    if (canonical === null) {
      const kept = resolution?.grants[0]?.kind === 'legacy_task';
      if (kept) report.legacyTasks += 1;
      logger.warn(
        { codename, ...named(labels) },
        kept
          ? 'permission codename in the old task format matches no known task: kept, and still matched the old way (deprecated); grant cybercom_queue.task.<task name> instead'
          : 'permission codename grants nothing (not a known format, or no database or collection it could name): left as it is',
      );
      continue;
    }
    report.converted += 1;
    if (resolution?.ambiguous === true) {
      report.ambiguous += 1;
      logger.warn(
        { codename, now: canonical, existing: !resolution.unresolved, ...named(labels) },
        `legacy permission codename had more than one meaning and now grants all ${canonical.length} ${resolution.unresolved ? '(none exists yet)' : 'that exist'}; revoke the ones not meant`,
      );
    }
  }
  if (resolutions.size === 0) return report;

  await catalog.register([...resolutions.values()].flatMap((r) => (replacement(r) === null ? [] : r.grants.map(describeCodename))));
  for (const { model, holder } of holders) {
    const permissions = rewrite(holder.permissions, resolutions);
    if (sameList(permissions, holder.permissions)) continue;
    // Only if unchanged since read: an edit made meanwhile wins, and the next start retries.
    const filter = { _id: holder._id, permissions: holder.permissions };
    const update = { $set: { permissions } };
    const result =
      model === 'User' ? await models.User.updateOne(filter, update).exec() : await models.Group.updateOne(filter, update).exec();
    if (result.modifiedCount > 0) report[model === 'User' ? 'users' : 'groups'] += 1;
  }
  const replaced = [...resolutions].filter(([, r]) => replacement(r) !== null).map(([codename]) => codename);
  if (replaced.length > 0) await models.Permission.deleteMany({ codename: { $in: replaced } }).exec();
  if (report.converted > 0) logger.info(report, 'permission codenames migrated to the canonical format');
  return report;
}
