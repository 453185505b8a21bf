/**
 * Doubles that are not finite (±Infinity, NaN) are sent as `{"$numberDouble": "Infinity"}` (JSON
 * has no literal for them) and come back the same way on every JSON read (one record, a page, a
 * whole streamed export, NDJSON), and as `inf`, `-inf` and `nan` in CSV, which pandas reads back as
 * floats; never as `null`. Written through the real HTTP API, real engine.
 */
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startTestApp, type TestApp } from '../../support/app.js';

let app: TestApp;
let token: string;
let base: string;

beforeAll(async () => {
  app = await startTestApp();
  await app.users.createUser({ username: 'root', password: 'pw-superuser-1', isSuperuser: true });
  token = await app.users.tokenFor('root');
  const db = `${app.prefix}nonfinite`;
  expect((await call(app.url, 'POST', '/api/data_store/data/', { token, body: { database: db } })).status).toBe(201);
  expect((await call(app.url, 'POST', `/api/data_store/data/${db}/`, { token, body: { collection: 'values' } })).status).toBe(201);
  base = `/api/data_store/data/${db}/values/`;
});

afterAll(async () => {
  await app?.close();
});

/** A double as Extended JSON: the form the API reads for every double, finite or not (-0 keeps its sign). */
function wrapped(value: number): { $numberDouble: string } {
  if (Number.isNaN(value)) return { $numberDouble: 'NaN' };
  if (!Number.isFinite(value)) return { $numberDouble: value > 0 ? 'Infinity' : '-Infinity' };
  return { $numberDouble: Object.is(value, -0) ? '-0.0' : String(value) };
}

/** A number as a JSON read gives it back: a number, or the wrapper of one that is not finite. */
function fromJson(value: unknown): number {
  if (typeof value === 'number') return value;
  const text = (value as { $numberDouble?: unknown } | null)?.$numberDouble;
  if (text !== 'Infinity' && text !== '-Infinity' && text !== 'NaN') throw new Error(`not a double: ${JSON.stringify(value)}`);
  return Number(text);
}

/** A CSV cell read as Python's float() reads it. */
function fromCsv(cell: string): number {
  if (cell === 'inf') return Infinity;
  if (cell === '-inf') return -Infinity;
  if (cell === 'nan') return NaN;
  expect(cell).toMatch(/^-?\d/);
  return Number(cell);
}

/** The one record with this id through each way out, as {field: number} maps. */
async function readEverywhere(id: string, fields: readonly string[]): Promise<Record<string, Record<string, number>>> {
  const query = encodeURIComponent(JSON.stringify({ filter: { _id: id } }));
  const pick = (record: Record<string, unknown>) => Object.fromEntries(fields.map((f) => [f, fromJson(record[f])]));
  const one = await call(app.url, 'GET', `${base}${id}/`, { token });
  const page = await call(app.url, 'GET', `${base}?query=${query}`, { token });
  const whole = await call(app.url, 'GET', `${base}?query=${query}&page_size=0`, { token });
  const ndjson = await call(app.url, 'GET', `${base}?query=${query}&format=ndjson`, { token });
  const csv = await call(app.url, 'GET', `${base}?query=${query}&format=csv`, { token });
  for (const res of [one, page, whole, ndjson, csv]) expect(res.status, res.text.slice(0, 300)).toBe(200);
  const [header, row] = csv.text.trim().split(/\r\n/);
  const columns = header!.split(',');
  const cells = row!.split(',');
  return {
    one: pick(one.json),
    page: pick(page.json.results[0]),
    whole: pick(whole.json.results[0]),
    ndjson: pick(JSON.parse(ndjson.text.trim()) as Record<string, unknown>),
    csv: Object.fromEntries(fields.map((f) => [f, fromCsv(cells[columns.indexOf(f)]!)])),
  };
}

describe('doubles that are not finite', () => {
  it('are written as {"$numberDouble": ...} in JSON and NDJSON and as inf/-inf/nan in CSV, never as null', async () => {
    const res = await call(app.url, 'POST', base, {
      token,
      rawBody:
        '{"_id": "special", "pos": {"$numberDouble": "Infinity"}, "neg": {"$numberDouble": "-Infinity"}, "nan": {"$numberDouble": "NaN"}}',
    });
    expect(res.status, res.text).toBe(201);
    const one = await call(app.url, 'GET', `${base}special/`, { token });
    expect(one.text).toContain('"pos":{"$numberDouble":"Infinity"}');
    expect(one.text).toContain('"neg":{"$numberDouble":"-Infinity"}');
    expect(one.text).toContain('"nan":{"$numberDouble":"NaN"}');
    const csv = await call(app.url, 'GET', `${base}?format=csv&query=${encodeURIComponent('{"filter": {"_id": "special"}}')}`, { token });
    expect(csv.text).toBe('_id,pos,neg,nan\r\nspecial,inf,-inf,nan\r\n');
    const everywhere = await readEverywhere('special', ['pos', 'neg', 'nan']);
    for (const read of Object.values(everywhere)) expect(read).toEqual({ pos: Infinity, neg: -Infinity, nan: NaN });
  });

  it('read back as JSON and sent again, are stored as they were', async () => {
    const first = await call(app.url, 'GET', `${base}special/`, { token });
    const again = first.text.replace('"_id":"special"', '"_id":"special-again"');
    expect((await call(app.url, 'POST', base, { token, rawBody: again })).status).toBe(201);
    const second = await call(app.url, 'GET', `${base}special-again/`, { token });
    expect(second.text).toBe(again);
  });

  it('read back by pandas from the CSV export as floats', async () => {
    const python = '.venv-client/bin/python';
    const csv = await call(app.url, 'GET', `${base}?format=csv&query=${encodeURIComponent('{"filter": {"_id": "special"}}')}`, { token });
    if (!existsSync(python)) {
      // Without the client's environment, what pandas reads as floats: its own spellings.
      expect(csv.text.split('\r\n')[1]).toBe('special,inf,-inf,nan');
      return;
    }
    const read = execFileSync(
      python,
      [
        '-c',
        'import sys, io, pandas; f = pandas.read_csv(io.StringIO(sys.stdin.read())); print([str(f[c].dtype) + ":" + repr(f[c][0]) for c in ("pos", "neg", "nan")])',
      ],
      { input: csv.text, encoding: 'utf8' },
    );
    expect(read.trim()).toBe("['float64:np.float64(inf)', 'float64:np.float64(-inf)', 'float64:np.float64(nan)']");
  });

  it('and every other double, come back the same through every way out', async () => {
    let n = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.oneof(fc.constantFrom(Infinity, -Infinity, NaN, -0, 3, Number.MAX_VALUE, 5e-324), fc.double()), {
          minLength: 1,
          maxLength: 6,
        }),
        async (values) => {
          const id = `p${(n += 1)}`;
          const fields = values.map((_, i) => `v${i}`);
          const record = Object.fromEntries([['_id', id], ...values.map((v, i) => [`v${i}`, wrapped(v)])]);
          expect((await call(app.url, 'POST', base, { token, body: record })).status).toBe(201);
          const expected = Object.fromEntries(values.map((v, i) => [`v${i}`, v]));
          for (const [way, read] of Object.entries(await readEverywhere(id, fields))) {
            for (const field of fields)
              expect(Object.is(read[field], expected[field]), `${way} ${field}: ${read[field]} vs ${expected[field]}`).toBe(true);
          }
        },
      ),
      { numRuns: 25 },
    );
  });
});
