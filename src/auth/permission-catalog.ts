/**
 * The catalog of known permission codenames (auth_permission), which the admin site offers when
 * editing users and groups. Grants register their codenames here; the built-in roles are seeded
 * at start-up. Upserts only insert: a name edited in the admin site is kept.
 */
import type { AuthModels } from './models.js';
import { BUILTIN_PERMISSIONS, describeCodename, type ParsedCodename } from './codenames.js';
import { decodeGrant, encodeGrant, invalidPermission, type Grant } from './grants.js';
import { LegacyGrantResolver, parseLegacyCodename, type GrantTargets } from './legacy-grants.js';

export class PermissionCatalog {
  constructor(
    private readonly models: AuthModels,
    /** What exists, to read legacy codenames given as input; without it none is taken as existing. */
    private readonly targets?: GrantTargets,
  ) {}

  /**
   * Checks codenames given as input (400 `invalid_permission` on a bad one) and returns them in
   * canonical form, without writing anything. A legacy codename is converted when it has one
   * meaning among what exists (or one meaning at all); when it could mean several grants, or is
   * a task codename that matches no known task, it is refused with the canonical choices, since
   * whoever typed it can say which one they meant.
   */
  async normalize(codenames: readonly string[]): Promise<ParsedCodename[]> {
    const resolver = new LegacyGrantResolver(this.targets);
    const parsed = new Map<string, ParsedCodename>();
    for (const codename of new Set(codenames)) {
      const p = describeCodename(decodeGrant(codename) ?? (await fromLegacy(codename, resolver)));
      parsed.set(p.codename, p);
    }
    return [...parsed.values()];
  }

  async register(parsed: readonly ParsedCodename[]): Promise<void> {
    if (parsed.length === 0) return;
    try {
      await this.models.Permission.bulkWrite(
        parsed.map((p) => ({
          updateOne: {
            filter: { codename: p.codename },
            update: { $setOnInsert: { codename: p.codename, name: p.name, area: p.area } },
            upsert: true,
          },
        })),
        { ordered: false },
      );
    } catch (err) {
      // Two processes upserting the same new codename: the loser's duplicate-key error means
      // the row exists, which is all this wanted.
      if (!isDuplicateKeyOnly(err)) throw err;
    }
  }

  async seedBuiltins(): Promise<void> {
    await this.register(BUILTIN_PERMISSIONS);
  }
}

/** The one grant an old-style codename given as input stands for (400 when there is not one). */
async function fromLegacy(codename: string, resolver: LegacyGrantResolver): Promise<Grant> {
  const legacy = parseLegacyCodename(codename);
  if (legacy === null) throw invalidPermission(codename);
  const { grants } = await resolver.resolve(legacy);
  const [first] = grants;
  if (first === undefined) throw invalidPermission(codename, 'this old-style codename names no possible database or collection');
  if (first.kind === 'legacy_task') {
    throw invalidPermission(
      codename,
      'this old-style task codename matches no known task; write it as cybercom_queue.task.<task name>, the name with its own dots',
    );
  }
  if (grants.length > 1)
    throw invalidPermission(codename, `this old-style codename could mean ${grants.map(encodeGrant).join(' or ')}; give the one meant`);
  return first;
}

function isDuplicateKeyOnly(err: unknown): boolean {
  const e = err as { code?: number; writeErrors?: { code?: number }[] };
  if (Array.isArray(e.writeErrors) && e.writeErrors.length > 0) return e.writeErrors.every((w) => w.code === 11000);
  return e.code === 11000;
}
