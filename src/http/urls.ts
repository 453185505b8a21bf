/**
 * The service's URLs in one place: where the app mounts each part (src/app/route-table.ts takes
 * its prefixes from here) and typed builders for the links, redirects and cookie paths the
 * features and pages make. A lint rule refuses an `'/api/` literal anywhere else in src/, and a
 * unit test checks each builder against the routes the app declares.
 */

/** Everything the service answers lives under this path. */
export const API_ROOT = '/api';

export type DocumentArea = 'data_store' | 'catalog';

/** The mount path of each part (no trailing slash). */
export const MOUNTS = {
  api: API_ROOT,
  health: `${API_ROOT}/health`,
  schema: `${API_ROOT}/schema`,
  metrics: `${API_ROOT}/metrics`,
  client: `${API_ROOT}/client`,
  links: `${API_ROOT}/links`,
  queue: `${API_ROOT}/queue`,
  admin: `${API_ROOT}/admin`,
  manual: `${API_ROOT}/manual`,
  explore: `${API_ROOT}/explore`,
  exploreStatic: `${API_ROOT}/explore/static`,
  static: `${API_ROOT}/static`,
  records: { data_store: `${API_ROOT}/data_store/data`, catalog: `${API_ROOT}/catalog/data` },
  indexes: { data_store: `${API_ROOT}/data_store/indexes`, catalog: `${API_ROOT}/catalog/indexes` },
} as const;

const part = (name: string): string => `${encodeURIComponent(name)}/`;

export const urls = {
  /** The API root, the browsable API's home. */
  root: (): string => `${API_ROOT}/`,
  /** The login page; `next` is where it leads once logged in. */
  login: (next?: string): string => `${API_ROOT}/auth/login/${next === undefined ? '' : `?next=${encodeURIComponent(next)}`}`,
  logout: (): string => `${API_ROOT}/auth/logout/`,
  token: (): string => `${API_ROOT}/token/`,
  tokenRefresh: (): string => `${API_ROOT}/token/refresh/`,
  tokenVerify: (): string => `${API_ROOT}/token/verify/`,
  /** An area's databases, a database's collections, a collection's records, or one record. */
  records: (area: DocumentArea, db?: string, col?: string, id?: string): string =>
    `${MOUNTS.records[area]}/${[db, col, id]
      .filter((p): p is string => p !== undefined)
      .map(part)
      .join('')}`,
  /** A collection's indexes page (`rest`: the collection's path under the records mount, as given). */
  indexes: (area: DocumentArea, rest: string): string => `${MOUNTS.indexes[area]}/${rest}`,
  manual: (): string => `${MOUNTS.manual}/`,
  /** The data explorer's page of a collection. */
  explore: (area: DocumentArea, db: string, col: string): string => `${MOUNTS.explore}/${area}/${part(db)}${part(col)}`,
  admin: (): string => MOUNTS.admin,
};

/** The records mount a path is under, and the rest of the path after it; null for any other path. */
export function recordsPath(path: string): { area: DocumentArea; rest: string } | null {
  for (const area of ['data_store', 'catalog'] as const) {
    const prefix = `${MOUNTS.records[area]}/`;
    if (path.startsWith(prefix)) return { area, rest: path.slice(prefix.length) };
  }
  return null;
}
