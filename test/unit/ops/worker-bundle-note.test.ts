/** What ops/worker-bundle tells the operator a bundle's worker login reaches. */
import { describe, expect, it } from 'vitest';
import { workerCredentialsNote } from '../../../src/ops/commands/worker-bundle.js';

describe('workerCredentialsNote', () => {
  it("on the local runtime's FerretDB: the data store, the catalog and the results, not the private store's data", () => {
    const note = workerCredentialsNote({ runtime: 'local', dbEngine: 'ferretdb' }) ?? '';
    expect(note).toContain('cannot restrict what a login may do');
    expect(note).toContain('every data-store and catalog database and the task results');
    expect(note).toMatch(/cannot reach the\s+service's users, groups, API tokens, sessions/);
    expect(note).toContain('private store');
    expect(note).not.toMatch(/users and tokens included|every database/);
  });

  it('says nothing where MongoDB holds workers to their role', () => {
    expect(workerCredentialsNote({ runtime: 'compose', dbEngine: 'ferretdb' })).toBeUndefined();
    expect(workerCredentialsNote({ runtime: 'local', dbEngine: 'mongod' })).toBeUndefined();
  });
});
