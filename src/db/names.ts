/**
 * Database and collection names, checked against MongoDB's own rules before they reach the
 * driver, so a bad name is a clear 400 naming the problem instead of a server error.
 */
import { badRequest } from '../errors.js';

/** MongoDB refuses these in database names (the Windows set, which is the strictest). */
const DATABASE_FORBIDDEN_CHARS = ['/', '\\', '.', ' ', '"', '$', '*', '<', '>', ':', '|', '?', '\0'] as const;
/** MongoDB's limit is "fewer than 64 bytes". */
export const MAX_DATABASE_NAME_BYTES = 63;
export const MAX_COLLECTION_NAME_BYTES = 255;

/** Databases that belong to the server itself: never exposed through the API, never backed up or restored. */
const SYSTEM_DATABASES: readonly string[] = ['admin', 'config', 'local'];

function describeChar(c: string): string {
  if (c === ' ') return 'a space';
  if (c === '\0') return 'a NUL character';
  return `"${c}"`;
}

// JSON.stringify keeps control characters (NUL in particular) visible in the message.
const shown = (name: string): string => JSON.stringify(name);

const byteLength = (s: string): number => Buffer.byteLength(s, 'utf8');

/** An unpaired UTF-16 surrogate: not Unicode text, and not storable as a UTF-8 name. */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

function assertWellFormed(name: string, what: 'database' | 'collection'): void {
  if (LONE_SURROGATE.test(name))
    throw badRequest('invalid_name', `The ${what} name ${shown(name)} is not valid Unicode (an unpaired surrogate).`, { name });
}

export function validateDatabaseName(name: unknown): string {
  if (typeof name !== 'string') throw badRequest('invalid_name', 'The database name must be a string.');
  if (name.length === 0) throw badRequest('invalid_name', 'The database name must not be empty.', { name });
  assertWellFormed(name, 'database');
  for (const c of DATABASE_FORBIDDEN_CHARS) {
    if (name.includes(c)) {
      throw badRequest('invalid_name', `The database name ${shown(name)} contains ${describeChar(c)}, which is not allowed.`, { name });
    }
  }
  const bytes = byteLength(name);
  if (bytes > MAX_DATABASE_NAME_BYTES) {
    throw badRequest(
      'invalid_name',
      `The database name ${shown(name)} is ${bytes} bytes long (UTF-8); the limit is ${MAX_DATABASE_NAME_BYTES}.`,
      { name },
    );
  }
  return name;
}

export function validateCollectionName(name: unknown): string {
  if (typeof name !== 'string') throw badRequest('invalid_name', 'The collection name must be a string.');
  if (name.length === 0) throw badRequest('invalid_name', 'The collection name must not be empty.', { name });
  assertWellFormed(name, 'collection');
  if (name.includes('$'))
    throw badRequest('invalid_name', `The collection name ${shown(name)} contains "$", which is not allowed.`, { name });
  // NUL is MongoDB's own rule; the other control characters are invisible in every listing, so a
  // collection named with one could not be told apart from its neighbours or typed into a URL.
  if (/[\u0000-\u001f\u007f]/.test(name)) {
    throw badRequest('invalid_name', `The collection name ${shown(name)} contains a control character, which is not allowed.`, { name });
  }
  if (name.startsWith('.')) throw badRequest('invalid_name', `The collection name ${shown(name)} must not start with ".".`, { name });
  // system.* collections (users, views, profile, ...) are the server's; reading or creating
  // them through the API would bypass the permission model.
  if (name.startsWith('system.')) {
    throw badRequest('invalid_name', `The collection name ${shown(name)} must not start with "system.".`, { name });
  }
  const bytes = byteLength(name);
  if (bytes > MAX_COLLECTION_NAME_BYTES) {
    throw badRequest(
      'invalid_name',
      `The collection name ${shown(name)} is ${bytes} bytes long (UTF-8); the limit is ${MAX_COLLECTION_NAME_BYTES}.`,
      { name },
    );
  }
  return name;
}

/**
 * True for the server's own databases and the service's internal ones. Case-insensitive because
 * MongoDB refuses two databases whose names differ only in case, so "Admin" can only ever mean
 * "admin" (or fail), and an internal "cybercom" must not be reachable as "CyberCom".
 */
export function isReservedDatabase(name: string, internalDatabases: readonly string[]): boolean {
  const lower = name.toLowerCase();
  return isSystemDatabase(lower) || internalDatabases.some((internal) => internal.toLowerCase() === lower);
}

/**
 * The server's own databases (any case, as above). Backups skip only these: the service's
 * database, which the API and the workers keep away from users, is application data to back up.
 */
export function isSystemDatabase(name: string): boolean {
  return SYSTEM_DATABASES.includes(name.toLowerCase());
}
