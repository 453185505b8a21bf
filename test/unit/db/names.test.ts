import { describe, expect, it } from 'vitest';
import { isReservedDatabase, isSystemDatabase, validateCollectionName, validateDatabaseName } from '../../../src/db/names.js';
import { apiError } from '../documents/api-error.js';

describe('validateDatabaseName', () => {
  it.each(['catalog', 'my_db', 'Data-2024', 'a', 'ünïcödé', 'x'.repeat(63)])('accepts %j', (name) => {
    expect(validateDatabaseName(name)).toBe(name);
  });

  it.each([
    ['/', 'a/b'],
    ['\\', 'a\\b'],
    ['.', 'a.b'],
    [' ', 'a b'],
    ['"', 'a"b'],
    ['$', 'a$b'],
    ['*', 'a*b'],
    ['<', 'a<b'],
    ['>', 'a>b'],
    [':', 'a:b'],
    ['|', 'a|b'],
    ['?', 'a?b'],
    ['NUL', 'a\0b'],
    ['a lone high surrogate', 'a\ud800b'],
    ['a lone low surrogate', 'a\udc00'],
  ])('refuses the forbidden character %s', (_char, name) => {
    const err = apiError(() => validateDatabaseName(name));
    expect(err.status).toBe(400);
    expect(err.code).toBe('invalid_name');
    expect(err.message).toMatch(/database name/);
  });

  it('names the offending character in the message', () => {
    expect(apiError(() => validateDatabaseName('my.db')).message).toContain('"."');
    expect(apiError(() => validateDatabaseName('my db')).message).toContain('space');
    expect(apiError(() => validateDatabaseName('my\0db')).message).toContain('NUL');
  });

  it('refuses the empty string and non-strings', () => {
    for (const bad of ['', undefined, null, 42, ['db'], { name: 'db' }]) {
      const err = apiError(() => validateDatabaseName(bad));
      expect(err.code).toBe('invalid_name');
      expect(err.status).toBe(400);
    }
  });

  it('counts the 63-byte limit in UTF-8 bytes, not characters', () => {
    expect(validateDatabaseName('a'.repeat(63))).toHaveLength(63);
    expect(apiError(() => validateDatabaseName('a'.repeat(64))).message).toContain('64 bytes');
    // "é" is 2 bytes: 31 of them = 62 bytes (fine), 32 = 64 bytes (too long), 31 + "a" = 63.
    expect(validateDatabaseName('é'.repeat(31))).toBe('é'.repeat(31));
    expect(validateDatabaseName(`${'é'.repeat(31)}a`)).toBe(`${'é'.repeat(31)}a`);
    expect(apiError(() => validateDatabaseName('é'.repeat(32))).code).toBe('invalid_name');
    // "€" is 3 bytes: 21 = 63 bytes, 22 = 66 bytes; both are far below 63 characters.
    expect(validateDatabaseName('€'.repeat(21))).toBe('€'.repeat(21));
    expect(apiError(() => validateDatabaseName('€'.repeat(22))).message).toContain('66 bytes');
    // An emoji is 4 bytes (and 2 UTF-16 units): 16 of them are 64 bytes.
    expect(apiError(() => validateDatabaseName('😀'.repeat(16))).code).toBe('invalid_name');
    expect(validateDatabaseName(`${'😀'.repeat(15)}abc`)).toBe(`${'😀'.repeat(15)}abc`);
  });
});

describe('validateCollectionName', () => {
  it.each(['samples', 'a.b', 'with space', 'système', 'systemx', 'system', 'x'.repeat(255), 'a.', 'weird*<>:|?chars', 'say "hi"'])(
    'accepts %j',
    (name) => {
      expect(validateCollectionName(name)).toBe(name);
    },
  );

  it.each([
    ['empty', ''],
    ['dollar', 'a$b'],
    ['leading dollar', '$cmd'],
    ['NUL', 'a\0b'],
    ['system. prefix', 'system.users'],
    ['system. prefix (views)', 'system.views'],
    ['leading dot', '.hidden'],
    ['too long', 'x'.repeat(256)],
    ['too long in bytes', 'é'.repeat(128)],
    ['control character', 'a\u0001b'],
    ['lone surrogate', 'x\udbff'],
    ['line feed', 'a\nb'],
    ['DEL', 'a\u007fb'],
  ])('refuses %s', (_what, name) => {
    const err = apiError(() => validateCollectionName(name));
    expect(err.status).toBe(400);
    expect(err.code).toBe('invalid_name');
    expect(err.message).toMatch(/collection name/);
  });

  it('accepts 255 bytes of multibyte characters but not 256', () => {
    expect(validateCollectionName('€'.repeat(85))).toHaveLength(85); // 255 bytes
    expect(apiError(() => validateCollectionName(`${'€'.repeat(85)}a`)).message).toContain('256 bytes');
  });

  it('refuses non-strings', () => {
    for (const bad of [undefined, null, 1, true, ['c'], {}]) {
      expect(apiError(() => validateCollectionName(bad)).code).toBe('invalid_name');
    }
  });
});

describe('isReservedDatabase', () => {
  const internal = ['cybercom'] as const;

  it.each(['admin', 'config', 'local', 'ADMIN', 'Admin', 'aDmIn', 'CONFIG', 'Local', 'cybercom', 'CyberCom', 'CYBERCOM'])(
    '%j is reserved',
    (name) => {
      expect(isReservedDatabase(name, internal)).toBe(true);
    },
  );

  it.each(['catalog', 'admins', 'myadmin', 'configs', 'locale', 'cybercom2', 'data'])('%j is not reserved', (name) => {
    expect(isReservedDatabase(name, internal)).toBe(false);
  });

  it('compares internal names case-insensitively whichever side has capitals', () => {
    expect(isReservedDatabase('service_db', ['Service_DB'])).toBe(true);
    expect(isReservedDatabase('catalog', [])).toBe(false);
    expect(isReservedDatabase('admin', [])).toBe(true);
  });
});

describe('isSystemDatabase (what backups and restores skip)', () => {
  it.each(['admin', 'config', 'local', 'Admin', 'CONFIG', 'Local'])("%j is the server's own, in any case", (name) => {
    expect(isSystemDatabase(name)).toBe(true);
  });

  it.each(['cybercom', 'catalog', 'admins', 'locale'])('%j is application data (the service database included)', (name) => {
    expect(isSystemDatabase(name)).toBe(false);
  });
});
