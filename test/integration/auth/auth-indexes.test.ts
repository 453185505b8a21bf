/**
 * The unique indexes of the auth collections exist once the service has started: they are built
 * explicitly after the start-up migrations (not when the models are registered), so this checks
 * that building them was not lost on the way.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../support/app.js';

let app: TestApp;

beforeAll(async () => {
  app = await startTestApp();
});

afterAll(async () => {
  await app?.close();
});

async function uniqueKeys(collection: string): Promise<string[]> {
  const indexes = await app.ctx.serviceDb.collection(collection).listIndexes().toArray();
  return indexes
    .filter((index) => index.unique === true)
    .map((index) => Object.keys(index.key as object).join(','))
    .sort();
}

describe('auth collections', () => {
  it('have their unique indexes right after start-up', async () => {
    expect(await uniqueKeys('auth_user')).toContain('username');
    expect(await uniqueKeys('authtoken_token')).toEqual(expect.arrayContaining(['key_hash', 'user']));
  });
});
