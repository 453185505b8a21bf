import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { defaultApiProcesses } from '../../../src/config/api-processes.js';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, environmentWithFile, loadSettings } from '../../../src/config/settings.js';

const minimal = { SECRET_KEY: 'k'.repeat(40), MONGO_URI: 'mongodb://localhost:27017/' };

function problems(env: Record<string, string | undefined>): string[] {
  try {
    loadSettings(env);
  } catch (e) {
    if (e instanceof ConfigError) return e.problems;
    throw e;
  }
  return [];
}

describe('loadSettings', () => {
  it('applies secure defaults', () => {
    const s = loadSettings(minimal);
    expect(s.debug).toBe(false);
    expect(s.allowedHosts).toEqual(['localhost', '127.0.0.1', '[::1]']);
    expect(s.dataStoreAnonymous).toBe(false);
    expect(s.catalogAnonymous).toBe(false);
    expect(s.catalogDatabases).toEqual(['catalog']);
    expect(s.maxBodyBytes).toBe(16 * 1024 * 1024);
    expect(s.defaultPageSize).toBe(10);
    expect(s.broker).toBeUndefined();
    expect(s.mongo).toMatchObject({ uri: 'mongodb://localhost:27017/', authSource: 'admin', operationTimeoutMs: 20_000 });
    // Bounded streaming: a caller's concurrent streams, and how long a client may take nothing.
    expect([s.streamedReadsPerUser, s.streamSendTimeoutSeconds]).toEqual([4, 30]);
  });

  it("derives the login throttle's account and address limits from LOGIN_MAX_FAILURES unless set", () => {
    const derived = loadSettings({ ...minimal, LOGIN_MAX_FAILURES: '3' });
    expect([derived.loginMaxFailures, derived.loginAccountMaxFailures, derived.loginAddressMaxFailures]).toEqual([3, 12, 60]);
    const set = loadSettings({ ...minimal, LOGIN_ACCOUNT_MAX_FAILURES: '7', LOGIN_ADDRESS_MAX_FAILURES: '40' });
    expect([set.loginMaxFailures, set.loginAccountMaxFailures, set.loginAddressMaxFailures]).toEqual([5, 7, 40]);
  });

  it('reuses accounts and collections for 2 s unless SHARED_CACHE_MS says otherwise, within 100 ms to 60 s', () => {
    expect(loadSettings(minimal).sharedCacheMs).toBe(2_000);
    expect(loadSettings({ ...minimal, SHARED_CACHE_MS: '500' }).sharedCacheMs).toBe(500);
    for (const bad of ['0', '99', '60001', 'soon'])
      expect(problems({ ...minimal, SHARED_CACHE_MS: bad }).join()).toContain('SHARED_CACHE_MS');
  });

  it('parses lists and flags', () => {
    const s = loadSettings({
      ...minimal,
      ALLOWED_HOSTS: ' a.org , .b.org ,',
      DEBUG: 'Yes',
      SAFE_METHOD_PERM_REQUIRED: 'db_col,x_y',
      DATA_STORE_ANONYMOUS: 'on',
    });
    expect(s.allowedHosts).toEqual(['a.org', '.b.org']);
    expect(s.debug).toBe(true);
    expect(s.dataStoreAnonymous).toBe(true);
    expect(s.safeMethodPermRequired).toEqual(['db_col', 'x_y']);
  });

  it('reports every problem at once, naming each variable', () => {
    const found = problems({ SECRET_KEY: 'short', DEBUG: 'perhaps', HTTP_PORT: '99999', MONGO_URI: 'http://x' });
    const text = found.join('\n');
    for (const name of ['SECRET_KEY', 'DEBUG', 'HTTP_PORT', 'MONGO_URI']) expect(text).toContain(name);
    expect(found.length).toBeGreaterThanOrEqual(4);
    expect(problems({}).join('\n')).toMatch(/SECRET_KEY[\s\S]*MONGO_URI|MONGO_URI[\s\S]*SECRET_KEY/);
  });

  it('checks values that belong together and that files exist', () => {
    expect(problems({ ...minimal, MONGO_USERNAME: 'u' }).join()).toContain('MONGO_USERNAME and MONGO_PASSWORD');
    expect(problems({ ...minimal, MONGO_TLS_CA_FILE: '/nonexistent/ca.pem' }).join()).toContain('does not exist');
    expect(problems({ ...minimal, BROKER_URL: 'amqps://h/v', BROKER_TLS_CERT_FILE: '/etc/hostname' }).join()).toContain(
      'BROKER_TLS_KEY_FILE',
    );
    expect(problems({ ...minimal, BROKER_URL: 'http://h' }).join()).toContain('BROKER_URL');
  });

  it('treats empty values as unset', () => {
    expect(loadSettings({ ...minimal, DEBUG: '', BROKER_URL: '' }).broker).toBeUndefined();
  });
});

describe('environmentWithFile', () => {
  it('lets the process environment win over the env file', () => {
    const dir = mkdtempSync(join(tmpdir(), 'settings-'));
    const file = join(dir, '.env');
    writeFileSync(file, 'SECRET_KEY="from-file-0123456789012345678901234567"\nDEBUG=true\n# comment\nAPPLICATION_TITLE=Lab\n');
    const env = environmentWithFile({ DEBUG: 'false' }, file);
    expect(env.DEBUG).toBe('false');
    expect(env.APPLICATION_TITLE).toBe('Lab');
    expect(env.SECRET_KEY).toBe('from-file-0123456789012345678901234567');
    expect(environmentWithFile({ A: '1' }, join(dir, 'missing.env'))).toEqual({ A: '1' });
  });
});

describe('HTTPS served by the API itself', () => {
  const dir = mkdtempSync(join(tmpdir(), 'settings-https-'));
  const cert = join(dir, 'cert.pem');
  const key = join(dir, 'key.pem');
  writeFileSync(cert, 'cert');
  writeFileSync(key, 'key');

  it('is off by default', () => {
    expect(loadSettings(minimal).https).toBeUndefined();
  });

  it('takes a certificate, a key and an optional redirect port', () => {
    expect(loadSettings({ ...minimal, HTTPS_CERT_FILE: cert, HTTPS_KEY_FILE: key, HTTP_REDIRECT_PORT: '80' }).https).toEqual({
      certFile: cert,
      keyFile: key,
      redirectPort: 80,
    });
  });

  it('needs both files, existing, and no redirect port without them', () => {
    expect(problems({ ...minimal, HTTPS_CERT_FILE: cert })).toContain('HTTPS_CERT_FILE and HTTPS_KEY_FILE must be set together');
    expect(problems({ ...minimal, HTTPS_CERT_FILE: cert, HTTPS_KEY_FILE: join(dir, 'nope.pem') })).toContain(
      `HTTPS_KEY_FILE: file ${join(dir, 'nope.pem')} does not exist`,
    );
    expect(problems({ ...minimal, HTTP_REDIRECT_PORT: '80' })).toContain('HTTP_REDIRECT_PORT needs HTTPS_CERT_FILE and HTTPS_KEY_FILE');
  });
});

describe('API_PROCESSES', () => {
  it("defaults to the machine's default (one per core but one, at most one per GiB)", () => {
    expect(loadSettings(minimal).apiProcesses).toBe(defaultApiProcesses());
  });

  it('takes a whole number from 1 to 256, and reports anything else', () => {
    expect(loadSettings({ ...minimal, API_PROCESSES: '3' }).apiProcesses).toBe(3);
    for (const bad of ['0', '-1', '1.5', 'many', '257']) {
      expect(problems({ ...minimal, API_PROCESSES: bad }).join(), bad).toMatch(/^API_PROCESSES: /);
    }
  });
});

describe('the private database (PRIVATE_MONGO_*)', () => {
  it('is the main connection when unset', () => {
    const s = loadSettings({ ...minimal, MONGO_USERNAME: 'api', MONGO_PASSWORD: 'pw' });
    expect(s.privateMongo).toBe(s.mongo);
  });

  it('is a connection of its own when PRIVATE_MONGO_URI is set, with its own login and the main time limits', () => {
    const s = loadSettings({
      ...minimal,
      MONGO_QUERY_TIME_LIMIT_MS: '1234',
      MONGO_OPERATION_TIMEOUT_MS: '5678',
      PRIVATE_MONGO_URI: 'mongodb://%2Fsrv%2Fcybercom%2Fdata%2Fprivate-database%2Fsocket%2Fferretdb.sock/',
      PRIVATE_MONGO_USERNAME: 'cybercom-api',
      PRIVATE_MONGO_PASSWORD: 'secret',
    });
    expect(s.privateMongo).not.toBe(s.mongo);
    expect(s.privateMongo).toEqual({
      uri: 'mongodb://%2Fsrv%2Fcybercom%2Fdata%2Fprivate-database%2Fsocket%2Fferretdb.sock/',
      username: 'cybercom-api',
      password: 'secret',
      authSource: 'admin',
      tlsCaFile: undefined,
      tlsCertKeyFile: undefined,
      queryTimeLimitMs: 1234,
      operationTimeoutMs: 5678,
    });
  });

  it('reports a half-given login, login details without an address, and a wrong scheme', () => {
    const uri = 'mongodb://localhost:27018/';
    expect(problems({ ...minimal, PRIVATE_MONGO_URI: uri, PRIVATE_MONGO_USERNAME: 'u' }).join()).toContain(
      'PRIVATE_MONGO_USERNAME and PRIVATE_MONGO_PASSWORD must be set together',
    );
    expect(problems({ ...minimal, PRIVATE_MONGO_USERNAME: 'u', PRIVATE_MONGO_PASSWORD: 'p' }).join()).toContain(
      'PRIVATE_MONGO_USERNAME needs PRIVATE_MONGO_URI',
    );
    expect(problems({ ...minimal, PRIVATE_MONGO_URI: 'postgres://x' }).join()).toContain('PRIVATE_MONGO_URI');
    expect(problems({ ...minimal, PRIVATE_MONGO_URI: uri, PRIVATE_MONGO_TLS_CA_FILE: '/nonexistent/ca.pem' }).join()).toContain(
      'PRIVATE_MONGO_TLS_CA_FILE: file /nonexistent/ca.pem does not exist',
    );
  });

  it('reads the explorer map settings: no tiles by default, a tile URL template with one fixed host', () => {
    expect(loadSettings(minimal).explorerMap).toEqual({ tileUrl: undefined, tileAttribution: '', limit: 20_000 });
    const tiles = loadSettings({
      ...minimal,
      EXPLORER_TILE_URL: 'https://tile.openstreetmap.org/{z}/{x}/{y}.png',
      EXPLORER_TILE_ATTRIBUTION: '© OpenStreetMap contributors',
      EXPLORER_MAP_LIMIT: '5000',
    });
    expect(tiles.explorerMap).toEqual({
      tileUrl: 'https://tile.openstreetmap.org/{z}/{x}/{y}.png',
      tileAttribution: '© OpenStreetMap contributors',
      limit: 5000,
    });
    for (const url of [
      'https://{s}.tile.example.org/{z}/{x}/{y}.png',
      'ftp://tiles.example.org/{z}/{x}/{y}.png',
      'https://tiles.example.org/a.png',
    ]) {
      expect(problems({ ...minimal, EXPLORER_TILE_URL: url }).join()).toMatch(/EXPLORER_TILE_URL/);
    }
    expect(problems({ ...minimal, EXPLORER_MAP_LIMIT: '500000' }).join()).toMatch(/EXPLORER_MAP_LIMIT/);
  });
});
