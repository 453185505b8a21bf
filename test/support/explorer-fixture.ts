/**
 * A collection for the explorer's tests: weather-station readings with a nested object, a date,
 * a GeoJSON point, a low-cardinality field (`kind`), an array and some text, inserted through the
 * API in a few requests, or (for 100,000 records) straight through the driver. Values follow from
 * the record's number, so tests can work out what a view must show.
 */
import type { Collection, Document } from 'mongodb';
import { expect } from 'vitest';
import { call } from './app.js';

export const FIXTURE_KINDS = ['rain', 'snow', 'hail', 'fog', 'clear'] as const;
const START = Date.UTC(2024, 0, 1);
const HOUR = 3_600_000;

/** Record `i` was read `i` hours after 2024-01-01 00:00 UTC. */
export const fixtureWhen = (i: number): Date => new Date(START + i * HOUR);

/** Record `i` as the API takes it (Extended JSON: its date as `{"$date": …}`). */
export function fixtureRecord(i: number): Record<string, unknown> {
  return {
    station: { name: `Station ${i % 40}`, code: `ST${String(i % 40).padStart(3, '0')}` },
    kind: FIXTURE_KINDS[i % FIXTURE_KINDS.length],
    when: { $date: fixtureWhen(i).toISOString() },
    reading: { temp: Math.round(((i * 37) % 600) - 200) / 10, depth: (i * 13) % 1000 },
    loc: { type: 'Point', coordinates: [-100 + (i % 100) / 10, 30 + ((i * 7) % 100) / 10] },
    tags: i % 3 === 0 ? ['checked'] : [],
    note: i % 50 === 0 ? `Long note ${'x'.repeat(400)}` : `note ${i}`,
  };
}

/** Record `i` as the driver stores it: the same record, its date a Date. */
const fixtureDocument = (i: number): Document => ({ ...fixtureRecord(i), when: fixtureWhen(i) });

/** Creates `db` (when asked) and `col` through the API, as a user would. */
export async function createFixtureCollection(url: string, token: string, db: string, col: string, createDb = true): Promise<void> {
  if (createDb) expect((await call(url, 'POST', '/api/data_store/data/', { token, body: { database: db } })).status).toBe(201);
  expect((await call(url, 'POST', `/api/data_store/data/${db}/`, { token, body: { collection: col } })).status).toBe(201);
}

/**
 * Inserts fixture records 0..count-1 straight through the driver, `batch` at a time: 100,000
 * records through the API would be 40 requests of 2,500, each parsed and checked as a user's
 * would be, which is not what the tests that need that many records are about.
 */
export async function insertFixtureDocuments(collection: Collection, count: number, batch = 10_000): Promise<void> {
  for (let start = 0; start < count; start += batch) {
    const documents = Array.from({ length: Math.min(batch, count - start) }, (_, k) => fixtureDocument(start + k));
    const result = await collection.insertMany(documents, { ordered: true });
    expect(result.insertedCount).toBe(documents.length);
  }
}

/** Creates `db` (when asked) and `col`, and inserts `count` fixture records through the API. */
export async function insertFixture(url: string, token: string, db: string, col: string, count: number, createDb = true): Promise<void> {
  await createFixtureCollection(url, token, db, col, createDb);
  const chunk = 2_500;
  for (let start = 0; start < count; start += chunk) {
    const records = Array.from({ length: Math.min(chunk, count - start) }, (_, k) => fixtureRecord(start + k));
    const res = await call(url, 'POST', `/api/data_store/data/${db}/${col}/`, { token, body: records });
    expect(res.status, res.text.slice(0, 300)).toBe(201);
  }
}
