/**
 * The catalog of known permission codenames (auth_permission), which the admin site offers when
 * editing users and groups. Grants register their codenames here; the built-in roles are seeded
 * at start-up. Upserts only insert: a name edited in the admin site is kept.
 */
import type { AuthModels } from './models.js';
import { BUILTIN_PERMISSIONS, parseCodename, type ParsedCodename } from './codenames.js';

export class PermissionCatalog {
  constructor(private readonly models: AuthModels) {}

  /** Validates codenames (400 on a bad one) without touching the database. */
  parse(codenames: readonly string[]): ParsedCodename[] {
    return [...new Set(codenames)].map(parseCodename);
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
    await this.register(this.parse(BUILTIN_PERMISSIONS.map((p) => p.codename)));
  }
}

function isDuplicateKeyOnly(err: unknown): boolean {
  const e = err as { code?: number; writeErrors?: { code?: number }[] };
  if (Array.isArray(e.writeErrors) && e.writeErrors.length > 0) return e.writeErrors.every((w) => w.code === 11000);
  return e.code === 11000;
}
