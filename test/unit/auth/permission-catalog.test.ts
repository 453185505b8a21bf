/** Codenames given as input: canonical ones pass, old-style ones are converted only when unambiguous. */
import { describe, expect, it } from 'vitest';
import type { AuthModels } from '../../../src/auth/models.js';
import type { GrantTargets } from '../../../src/auth/legacy-grants.js';
import { PermissionCatalog } from '../../../src/auth/permission-catalog.js';

const targets: GrantTargets = {
  databases: async (area) => (area === 'data_store' ? ['lab', 'a_b', 'a'] : ['cat']),
  collections: async (area, db) => ({ lab: ['samples'], a_b: ['c'], a: ['b_c'], cat: ['sites'] })[db] ?? [],
  taskNames: async () => ['tasks.add'],
};
// normalize never touches the database.
const catalog = new PermissionCatalog({} as AuthModels, targets);
const codes = async (input: string[]) => (await catalog.normalize(input)).map((p) => p.codename);

describe('PermissionCatalog.normalize', () => {
  it('keeps canonical codenames and converts old-style ones with one meaning', async () => {
    expect(
      await codes([
        'data_store.lab.samples.safe',
        'data_store.lab_samples_add',
        'catalog.cat_sites_safe',
        'cybercom_queue.tasks_add',
        'data_store.lab_samples_add',
      ]),
    ).toEqual(['data_store.lab.samples.safe', 'data_store.lab.samples.add', 'catalog.cat.sites.safe', 'cybercom_queue.task.tasks.add']);
  });

  it.each([
    ['data_store.a_b_c_safe', /could mean data_store\.a\.b_c\.safe or data_store\.a_b\.c\.safe/],
    ['data_store.x_y_safe', /could mean data_store\.x_y\.safe or data_store\.x\.y\.safe/],
    ['cybercom_queue.tasks_mul', /matches no known task/],
    ['catalog.cat_safe', /names no possible database or collection/],
    ['data_store.anything', /is not a permission codename/],
  ])('refuses %s', async (codename, message) => {
    await expect(catalog.normalize([codename])).rejects.toMatchObject({
      status: 400,
      code: 'invalid_permission',
      message: expect.stringMatching(message),
    });
  });
});
