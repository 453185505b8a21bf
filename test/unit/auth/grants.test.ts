/**
 * The canonical codename format: every grant has one codename, every codename one grant, and
 * the names that used to share a codename no longer do.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  DOCUMENT_ACTIONS,
  ROLES,
  TASK_NAME,
  decodeGrant,
  encodeGrant,
  grantKey,
  isCollectionName,
  isDatabaseName,
  type Grant,
  type Role,
} from '../../../src/auth/grants.js';
import { GrantSet } from '../../../src/auth/grant-set.js';

/** Characters that make names interesting here: separators old and new, and non-ASCII. */
const nameChar = fc.constantFrom('a', 'b', 'Z', '0', '_', '-', '.', ' ', 'é', '日', '$', '/', '\u0001');
const name = fc.string({ unit: nameChar, minLength: 1, maxLength: 12 });
const db = name.filter(isDatabaseName);
const col = name.filter(isCollectionName);
const action = fc.constantFrom(...DOCUMENT_ACTIONS);
const task = fc.stringMatching(TASK_NAME).filter((t) => t.length > 0);

const grant: fc.Arbitrary<Grant> = fc.oneof(
  fc.constantFrom(...(Object.keys(ROLES) as Role[])).map((role): Grant => ({ kind: 'role', role })),
  fc.record({ db, action }).map((g): Grant => ({ kind: 'database', ...g })),
  fc
    .record({ area: fc.constantFrom('data_store' as const, 'catalog' as const), db, col, action })
    .map((g): Grant => ({ kind: 'collection', ...g })),
  task.map((t): Grant => ({ kind: 'task', task: t })),
);

describe('canonical codenames', () => {
  it('decode(encode(grant)) is the grant', () => {
    fc.assert(
      fc.property(grant, (g) => {
        expect(decodeGrant(encodeGrant(g))).toEqual(g);
      }),
      { numRuns: 2000 },
    );
  });

  it('two different grants never share a codename or a key', () => {
    fc.assert(
      fc.property(grant, grant, (a, b) => {
        fc.pre(grantKey(a) !== grantKey(b));
        expect(encodeGrant(a)).not.toBe(encodeGrant(b));
      }),
      { numRuns: 2000 },
    );
  });

  it('a codename that decodes is the one canonical spelling of its grant', () => {
    const text = fc.string({
      unit: fc.constantFrom('data_store', 'catalog', 'cybercom_queue', 'task', '.', '_', 'a', 'b', 'safe', 'add'),
      maxLength: 8,
    });
    fc.assert(
      fc.property(text, (codename) => {
        const g = decodeGrant(codename);
        if (g !== null) expect(encodeGrant(g)).toBe(codename);
      }),
      { numRuns: 5000 },
    );
  });

  it.each<[string, Grant, Grant]>([
    [
      'db a_b + col c vs db a + col b_c',
      { kind: 'collection', area: 'data_store', db: 'a_b', col: 'c', action: 'safe' },
      { kind: 'collection', area: 'data_store', db: 'a', col: 'b_c', action: 'safe' },
    ],
    [
      'database a_b vs collection a/b',
      { kind: 'database', db: 'a_b', action: 'safe' },
      { kind: 'collection', area: 'data_store', db: 'a', col: 'b', action: 'safe' },
    ],
    [
      'database a_b_c vs collection a_b/c',
      { kind: 'database', db: 'a_b_c', action: 'add' },
      { kind: 'collection', area: 'data_store', db: 'a_b', col: 'c', action: 'add' },
    ],
    ['task a.b_c vs task a_b.c', { kind: 'task', task: 'a.b_c' }, { kind: 'task', task: 'a_b.c' }],
    ['task named task_admin vs the task admin role', { kind: 'task', task: 'task_admin' }, { kind: 'role', role: 'task_admin' }],
    [
      'collection b.c in a vs collection c in a.b (never a database name)',
      { kind: 'collection', area: 'catalog', db: 'a', col: 'b.c', action: 'safe' },
      { kind: 'collection', area: 'catalog', db: 'a_b', col: 'c', action: 'safe' },
    ],
  ])('%s: different codenames, and one does not grant the other', (_case, a, b) => {
    expect(encodeGrant(a)).not.toBe(encodeGrant(b));
    const holder = GrantSet.fromCodenames([encodeGrant(a)]);
    expect(holder.has(a)).toBe(true);
    expect(holder.has(b)).toBe(false);
  });

  it('spells the documented forms', () => {
    expect(encodeGrant({ kind: 'database', db: 'lab', action: 'safe' })).toBe('data_store.lab.safe');
    expect(encodeGrant({ kind: 'collection', area: 'data_store', db: 'lab', col: 'runs.2024', action: 'add' })).toBe(
      'data_store.lab.runs.2024.add',
    );
    expect(encodeGrant({ kind: 'collection', area: 'catalog', db: 'catalog', col: 'sites', action: 'delete' })).toBe(
      'catalog.catalog.sites.delete',
    );
    expect(encodeGrant({ kind: 'task', task: 'cybercomq.tasks.add' })).toBe('cybercom_queue.task.cybercomq.tasks.add');
    expect(encodeGrant({ kind: 'role', role: 'datastore_admin' })).toBe('data_store.datastore_admin');
  });

  it('keys keep unvalidated names apart (a database name with a dot from a URL)', () => {
    const real: Grant = { kind: 'collection', area: 'data_store', db: 'a', col: 'b.c', action: 'safe' };
    const forged: Grant = { kind: 'collection', area: 'data_store', db: 'a.b', col: 'c', action: 'safe' };
    expect(encodeGrant(real)).toBe(encodeGrant(forged)); // why checks never compare codenames
    expect(grantKey(real)).not.toBe(grantKey(forged));
    expect(GrantSet.fromCodenames([encodeGrant(real)]).has(forged)).toBe(false);
  });
});
