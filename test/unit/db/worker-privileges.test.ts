/** Keeping the workers' role in step: the commands sent to MongoDB, and the quiet retreat on engines without roles. */
import { MongoServerError, type Db, type Document } from 'mongodb';
import { describe, expect, it } from 'vitest';
import { pino } from 'pino';
import { WorkerPrivileges } from '../../../src/db/worker-privileges.js';
import { dataStorePrivilege, resultPrivilege } from '../../../src/db/worker-role.js';

function fakeAdmin(reply: (command: Document) => Document) {
  const sent: Document[] = [];
  const db = { command: async (command: Document) => (sent.push(command), reply(command)) } as unknown as Db;
  return { db, sent };
}

function logger() {
  const lines: string[] = [];
  const log = pino({ level: 'info' }, { write: (line: string) => lines.push(line) });
  return { log, lines };
}

const serverError = (code: number, message: string) => new MongoServerError({ ok: 0, code, errmsg: message });

describe('WorkerPrivileges', () => {
  it('grants a created database and revokes a deleted one', async () => {
    const { db, sent } = fakeAdmin(() => ({ ok: 1 }));
    const privileges = new WorkerPrivileges(db, 'cybercom-worker-data', 'cybercom', logger().log);
    await privileges.grant('survey');
    await privileges.revoke('survey');
    expect(sent).toEqual([
      { grantPrivilegesToRole: 'cybercom-worker-data', privileges: [dataStorePrivilege('survey')] },
      { revokePrivilegesFromRole: 'cybercom-worker-data', privileges: [dataStorePrivilege('survey')] },
    ]);
  });

  it('reconciles: adds missing databases, removes gone ones, keeps the result collection', async () => {
    const stored = [resultPrivilege('cybercom', 'tombstone'), dataStorePrivilege('kept'), dataStorePrivilege('gone')];
    const { db, sent } = fakeAdmin((command) =>
      command.rolesInfo ? { ok: 1, roles: [{ role: 'cybercom-worker-data', privileges: stored }] } : { ok: 1 },
    );
    const privileges = new WorkerPrivileges(db, 'cybercom-worker-data', 'cybercom', logger().log);
    await privileges.reconcile(async () => ['kept', 'new']);
    expect(sent.slice(1)).toEqual([
      { grantPrivilegesToRole: 'cybercom-worker-data', privileges: [dataStorePrivilege('new')] },
      { revokePrivilegesFromRole: 'cybercom-worker-data', privileges: [dataStorePrivilege('gone')] },
    ]);
  });

  it('stops after one log line on an engine without role commands (FerretDB)', async () => {
    const { db, sent } = fakeAdmin((command) => {
      throw serverError(59, `no such command: '${Object.keys(command)[0]}'`);
    });
    const { log, lines } = logger();
    const privileges = new WorkerPrivileges(db, 'cybercom-worker-data', 'cybercom', log);
    await privileges.reconcile(async () => ['a']);
    await privileges.grant('b');
    await privileges.revoke('a');
    expect(sent).toHaveLength(1);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/cannot enforce roles/);
    expect(privileges.inactive).toBe(true);
  });

  it('stops after one log line when the server has no such role', async () => {
    const { db, sent } = fakeAdmin((command) => (command.rolesInfo ? { ok: 1, roles: [] } : { ok: 1 }));
    const { log, lines } = logger();
    const privileges = new WorkerPrivileges(db, 'cybercom-worker-data', 'cybercom', log);
    await privileges.reconcile(async () => ['a']);
    await privileges.grant('b');
    expect(sent).toHaveLength(1);
    expect(lines).toHaveLength(1);
  });

  it('logs other failures and goes on, never throwing', async () => {
    const { db } = fakeAdmin(() => {
      throw serverError(13, 'not authorized on admin to execute command');
    });
    const { log, lines } = logger();
    const privileges = new WorkerPrivileges(db, 'cybercom-worker-data', 'cybercom', log);
    await expect(privileges.grant('a')).resolves.toBeUndefined();
    await expect(privileges.grant('b')).resolves.toBeUndefined();
    expect(lines).toHaveLength(2);
    expect(privileges.inactive).toBe(false);
  });

  it('does nothing when no role is configured', async () => {
    const { db, sent } = fakeAdmin(() => ({ ok: 1 }));
    const privileges = new WorkerPrivileges(db, '', 'cybercom', logger().log);
    await privileges.reconcile(async () => ['a']);
    await privileges.grant('a');
    expect(sent).toEqual([]);
  });
});
