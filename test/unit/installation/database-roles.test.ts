/**
 * Least privilege on MongoDB, checked on the documents (no mongod runs here): the workers' role
 * names only the result collection and data-store databases, never the service database as a
 * whole nor its users, groups, tokens or sessions; the compose image's init script creates
 * exactly what the installer does.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ROLES } from '../../../src/installation/database-users.js';
import { SERVICE_DATABASE } from '../../../src/installation/env-files.js';
import { DEFAULT_RESULT_COLLECTION } from '../../../src/queue/results/result-store.js';
import {
  API_GRANTS_ROLE,
  apiGrantsRoleDocument,
  dataStorePrivilege,
  grantedDatabases,
  WORKER_ROLE,
  workerRoleDocument,
  type Privilege,
} from '../../../src/db/worker-role.js';

const ANY_DATABASE_ROLES = ['readWriteAnyDatabase', 'readAnyDatabase', 'dbAdminAnyDatabase', 'dbOwner', 'root', 'readWrite', 'read'];
const SERVICE_COLLECTIONS = ['auth_user', 'auth_group', 'auth_permission', 'authtoken_token', 'sessions'];

describe('the workers database role', () => {
  const role = workerRoleDocument(SERVICE_DATABASE, DEFAULT_RESULT_COLLECTION);

  it('is a custom role with no built-in role underneath', () => {
    expect(role.createRole).toBe(WORKER_ROLE);
    expect(role.roles).toEqual([]);
    expect(ROLES.worker).toEqual([{ role: WORKER_ROLE, db: 'admin' }]);
    for (const r of ROLES.worker) expect(ANY_DATABASE_ROLES).not.toContain(r.role);
  });

  it('reaches only the result collection of the service database', () => {
    const privileges = role.privileges as Privilege[];
    expect(privileges).toEqual([
      { resource: { db: 'cybercom', collection: 'tombstone' }, actions: expect.arrayContaining(['find', 'insert', 'update']) },
    ]);
    for (const p of privileges) {
      expect(p.resource.db, 'no any-database resource').not.toBe('');
      expect(p.resource.collection, 'no whole-database resource on the service database').not.toBe('');
      expect(SERVICE_COLLECTIONS).not.toContain(p.resource.collection);
    }
  });

  it('gets one whole-database privilege per data-store database, and reads them back as such', () => {
    const added = ['survey', 'lab'].map(dataStorePrivilege);
    expect(added[0]).toEqual({
      resource: { db: 'survey', collection: '' },
      actions: expect.arrayContaining(['find', 'insert', 'update', 'remove', 'createIndex', 'listCollections']),
    });
    expect(added[0]?.actions).not.toContain('dropDatabase');
    const stored = [...(role.privileges as Privilege[]), ...added];
    expect(grantedDatabases(stored, SERVICE_DATABASE)).toEqual(['survey', 'lab']);
  });
});

describe("the API's database roles", () => {
  it('add only the actions that maintain the workers role', () => {
    expect(ROLES.api.map((r) => r.role)).toEqual(['readWriteAnyDatabase', 'dbAdminAnyDatabase', API_GRANTS_ROLE]);
    const doc = apiGrantsRoleDocument();
    expect(doc.roles).toEqual([]);
    const actions = (doc.privileges as Privilege[]).flatMap((p) => p.actions).sort();
    expect(actions).toEqual(['grantRole', 'revokeRole', 'viewRole']);
  });
});

describe('docker/mongo-init/10-cybercom-users.sh', () => {
  const script = readFileSync(new URL('../../../docker/mongo-init/10-cybercom-users.sh', import.meta.url), 'utf8');
  const constant = (name: string): unknown => {
    const match = new RegExp(`const ${name} = (.*);$`, 'm').exec(script);
    expect(match, name).not.toBeNull();
    return JSON.parse(match?.[1] ?? 'null');
  };

  it('creates the same roles and gives the users the same roles as the installer', () => {
    expect(constant('apiGrantsRole')).toEqual(apiGrantsRoleDocument());
    expect(constant('workerRole')).toEqual(workerRoleDocument(SERVICE_DATABASE, DEFAULT_RESULT_COLLECTION));
    expect(constant('apiRoles')).toEqual(ROLES.api);
    expect(constant('workerRoles')).toEqual(ROLES.worker);
  });
});
