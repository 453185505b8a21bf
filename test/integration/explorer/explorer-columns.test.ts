/**
 * The explorer's table on records that differ from one another, through the real server and
 * database: columns that stay whatever the page holds (the sorted, filtered and faceted fields,
 * the columns of the whole sample, a chooser kept in the URL), missing values sorted last in both
 * directions, whole doubles shown as doubles and told from integers by the schema, the pandas
 * snippet reading text columns as text, long names cut short with their whole text as a tooltip,
 * and the favicon.
 */
import { execFile } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startTestApp, type TestApp } from '../../support/app.js';
import { createFixtureCollection } from '../../support/explorer-fixture.js';

const REPO = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const RECORDS = 60;
/** Records numbered below this have no `temp`: sorted ascending, MongoDB puts them first. */
const MISSING = 40;
const LONG_NAME = `long_${'n'.repeat(300)}`;
let app: TestApp;
let token: string;
let db: string;
const col = 'stations';
const base = () => `/api/explore/data_store/${db}/${col}/`;
const page = (path: string) => call(app.url, 'GET', path, { token, accept: 'text/html' });

/** Record `i` as JSON text: `temp` a whole double written `21.0`, `count` an integer, `station` digits with leading zeros. */
function recordJson(i: number): string {
  const fields = [
    `"n": ${i}`,
    `"station": "${String(i % 7).padStart(5, '0')}"`,
    `"count": ${i % 4}`,
    `"when": {"$date": "${new Date(Date.UTC(2024, 0, 1 + i)).toISOString()}"}`,
    `"site": {"name": "Site ${i % 3}"}`,
    `"code": "C${i % 40}"`,
    `"${LONG_NAME}": ${i}`,
  ];
  if (i >= MISSING) fields.push(`"temp": ${i - MISSING + 10}.0`);
  return `{${fields.join(', ')}}`;
}

/** The `data-field`s of the table's headers, in order. */
const headers = (html: string): string[] =>
  [...(html.split('<thead>')[1]?.split('</thead>')[0] ?? '').matchAll(/data-field="([^"]*)"/g)].map((m) => m[1] as string);

/** The text of each row's cell in the column of `field`. */
function cells(html: string, field: string): string[] {
  const index = headers(html).indexOf(field);
  const body = html.split('<tbody>')[1]?.split('</tbody>')[0] ?? '';
  return [...body.matchAll(/<tr data-testid="record-row">([\s\S]*?)<\/tr>/g)].map((row) => {
    const tds = [...(row[1] as string).matchAll(/<td[^>]*>([\s\S]*?)<\/td>/g)].map((td) => td[1] as string);
    return (tds[index] ?? '').replace(/<span class="acts">[\s\S]*$/, '').replace(/<[^>]+>/g, '');
  });
}

beforeAll(async () => {
  app = await startTestApp();
  await app.users.createUser({ username: 'root', password: 'pw-root-12345', isSuperuser: true });
  token = await app.users.tokenFor('root');
  db = `${app.prefix}columns`;
  await createFixtureCollection(app.url, token, db, col);
  const body = `[${Array.from({ length: RECORDS }, (_, i) => recordJson(i)).join(',')}]`;
  const res = await call(app.url, 'POST', `/api/data_store/data/${db}/${col}/`, { token, rawBody: body });
  expect(res.status, res.text.slice(0, 300)).toBe(201);
}, 180_000);

afterAll(async () => {
  if (app === undefined) return;
  await call(app.url, 'POST', '/api/data_store/data/', { token, body: { database: db, action: 'delete' } }).catch(() => undefined);
  await app.close();
});

describe('columns that stay', () => {
  it('keeps the sorted field as a column when no record on the page has it, its header reversing the sort', async () => {
    const res = await page(`${base()}?sort=-temp&size=10`);
    expect(res.status).toBe(200);
    expect(headers(res.text)).toContain('temp');
    const ascending = await page(`${base()}?sort=temp&size=10`);
    expect(headers(ascending.text)).toContain('temp');
    expect(ascending.text).toMatch(/href="[^"]*sort=-temp[^"]*"[^>]*data-testid="sort-header"/);
  });

  it('sorts records without the field last, ascending as well as descending, every record once', async () => {
    const ascending = await page(`${base()}?sort=temp&size=100`);
    const up = cells(ascending.text, 'temp');
    expect(up.length).toBe(RECORDS);
    expect(up.slice(0, RECORDS - MISSING)).toEqual(Array.from({ length: RECORDS - MISSING }, (_, k) => `${k + 10}.0`));
    expect(up.slice(RECORDS - MISSING).every((text) => text === '')).toBe(true);
    const descending = await page(`${base()}?sort=-temp&size=100`);
    expect(cells(descending.text, 'temp')[0]).toBe(`${RECORDS - MISSING + 9}.0`);
    // Paged: the page that holds the last records with a temp and the first without, then one of only missing values.
    const second = cells((await page(`${base()}?sort=temp&size=10&page=2`)).text, 'temp');
    expect(second).toEqual([...Array.from({ length: 10 }, (_, k) => `${k + 20}.0`)]);
    const third = cells((await page(`${base()}?sort=temp&size=10&page=3`)).text, 'n');
    expect(third.length).toBe(10);
    const ids = new Set<string>();
    for (let p = 1; p <= 6; p += 1) {
      for (const n of cells((await page(`${base()}?sort=temp&size=10&page=${p}`)).text, 'n')) ids.add(n);
    }
    expect(ids.size).toBe(RECORDS);
  });

  it('shows filtered and faceted fields as columns, and offers every column of the sample in the chooser', async () => {
    const res = await page(`${base()}?f=temp&op=exists&v=false&facet=count&size=10`);
    expect(res.status, res.text.slice(0, 500)).toBe(200);
    expect(headers(res.text)).toEqual(expect.arrayContaining(['temp', 'count']));
    const picker = res.text.split('data-testid="column-picker"')[1]?.split('</details>')[0] ?? '';
    expect(picker).toContain('value="temp"');
  });

  it('keeps chosen columns in the URL, and adds the sorted field to them', async () => {
    const res = await page(`${base()}?col=n&col=station&sort=temp`);
    expect(headers(res.text)).toEqual(['n', 'station', 'temp']);
  });
});

describe('the column menu and facets', () => {
  it('gives each header a menu: sort up and down, facet, hide (unless the view works on the field), and a filter', async () => {
    const res = await page(`${base()}?col=n&col=station&sort=n`);
    const menu = (field: string) => res.text.split(`<th data-field="${field}"`)[1]?.split('</th>')[0] ?? '';
    const hrefOf = (html: string, testId: string) =>
      unescape(new RegExp(`href="([^"]+)"[^>]*data-testid="${testId}"`).exec(html)?.[1] ?? '');
    expect(hrefOf(menu('station'), 'menu-sort-up')).toContain('sort=station');
    expect(hrefOf(menu('station'), 'menu-sort-down')).toContain('sort=-station');
    expect(hrefOf(menu('station'), 'menu-facet')).toContain('facet=station');
    expect(hrefOf(menu('station'), 'menu-hide')).toBe(`${base()}?sort=n&col=n`);
    expect(menu('n')).not.toContain('menu-hide');
    expect(menu('station')).toMatch(/<input type="hidden" name="f" value="station"><select name="op"/);
  });

  it('shows a facet\'s values ten at a time with "more", and suggests a field with 40 values', async () => {
    const first = await page(`${base()}?facet=n`);
    const facet = (html: string) => html.split('data-testid="facet" data-field="n"')[1]?.split('</div>')[0] ?? '';
    const values = (html: string) => (facet(html).match(/data-testid="facet-value"/g) ?? []).length;
    expect(values(first.text)).toBe(10);
    const more = /href="([^"]+)" data-testid="facet-more"/.exec(facet(first.text))?.[1];
    expect(more && unescape(more)).toBe(`${base()}?facet=n&fsize=30`);
    const second = await page(`${base()}?facet=n&fsize=30`);
    expect(values(second.text)).toBe(30);
    const all = await page(`${base()}?facet=n&fsize=100`);
    expect(values(all.text)).toBe(RECORDS);
    expect(facet(all.text)).not.toContain('facet-more');
    expect(first.text).toMatch(/data-testid="suggested-facet">code</);
  });
});

describe('the Summarize tab', () => {
  it('groups by a field with count, mean, min, max and sum, shows its $group pipeline, and its Python gives the same groups', async () => {
    const res = await page(`${base()}?tab=summary&group=station&measure=temp`);
    expect(res.status, res.text.slice(0, 300)).toBe(200);
    const rows = [...res.text.matchAll(/<tr data-testid="summary-row">([\s\S]*?)<\/tr>/g)].map((m) =>
      [...(m[1] as string).matchAll(/<td[^>]*>([\s\S]*?)<\/td>/g)].map((td) => (td[1] as string).replace(/<[^>]+>/g, '')),
    );
    expect(rows.length).toBe(7);
    const expected = new Map<string, number[]>();
    for (let i = 0; i < RECORDS; i += 1) {
      const station = String(i % 7).padStart(5, '0');
      expected.set(station, [...(expected.get(station) ?? []), ...(i >= MISSING ? [i - MISSING + 10] : [])]);
    }
    for (const [station, count, mean, min, max, sum] of rows) {
      const temps = expected.get(station as string) ?? [];
      expect(Number(count)).toBe(RECORDS / 7 > 8 && Number(station) < 4 ? 9 : 8);
      expect(Number(sum)).toBe(temps.reduce((a, b) => a + b, 0));
      expect(Number(min)).toBe(Math.min(...temps));
      expect(Number(max)).toBe(Math.max(...temps));
      expect(Number(mean)).toBeCloseTo(temps.reduce((a, b) => a + b, 0) / temps.length, 3);
      // Written as the table writes the stored types: `temp` holds whole doubles, so do its
      // sum, smallest and largest (`21.0`); the count is an integer.
      for (const stat of [sum, min, max]) expect(stat).toMatch(/^\d+\.0$/);
      expect(mean).toMatch(/\./);
      expect(count).toMatch(/^\d+$/);
    }
    expect(res.text).toContain('data-testid="summary-chart"');
    const pipeline = JSON.parse(unescape(res.text.split('data-testid="summary-pipeline">')[1]?.split('</pre>')[0] ?? '')) as unknown[];
    expect(pipeline[0]).toMatchObject({
      $group: { _id: { g0: '$station' }, count: { $sum: 1 }, mean: { $avg: '$temp' }, sum: { $sum: '$temp' } },
    });
    const python = unescape(res.text.split('data-testid="summary-python">')[1]?.split('</pre>')[0] ?? '');
    const { stdout } = await promisify(execFile)(
      join(REPO, '.venv-client', 'bin', 'python'),
      ['-c', `${python}\nimport json\nprint(json.dumps(sorted(int(c) for c in df["count"])))`],
      { env: { ...process.env, CYBERCOM_URL: app.url, CYBERCOM_TOKEN: token }, timeout: 120_000 },
    );
    expect(JSON.parse(stdout)).toEqual([8, 8, 8, 9, 9, 9, 9]);
  }, 120_000);

  it('asks for a field to group by first, and groups by two fields', async () => {
    expect((await page(`${base()}?tab=summary`)).text).toContain('Choose a field to group the records by.');
    const two = await page(`${base()}?tab=summary&group=station&group=count`);
    expect((two.text.match(/data-testid="summary-row"/g) ?? []).length).toBe(28);
    expect((await page(`${base()}?tab=summary&group=a&group=b&group=c`)).status).toBe(400);
  });
});

describe('calendar bins', () => {
  it('bins a date histogram by day when its range is two months, each bar filtering to its day', async () => {
    const res = await page(`${base()}?hist=when`);
    const box = res.text.split('data-testid="histogram" data-field="when"')[1]?.split('</svg>')[0] ?? '';
    expect(box).toContain('data-unit="day"');
    const titles = [...box.matchAll(/<title>([^<]+)<\/title>/g)].map((m) => m[1]);
    expect(titles.length).toBe(RECORDS);
    expect(titles[0]).toBe('2024-01-01: 1');
    expect(titles[RECORDS - 1]).toBe('2024-02-29: 1');
    const href = unescape(/<a href="([^"]+)" data-testid="histogram-bar">/.exec(box)?.[1] ?? '');
    const day = await page(href);
    expect(cells(day.text, 'n')).toEqual(['0']);
  });
});

describe('values as stored', () => {
  it('shows whole doubles as doubles and integers as integers', async () => {
    const res = await page(`${base()}?sort=-temp&size=10`);
    expect(cells(res.text, 'temp')[0]).toBe('29.0');
    expect(cells(res.text, 'count')).toContain('3');
    expect(cells(res.text, 'station')).toContain('00006');
  });

  it('tells int, double, date and string apart in the schema, with counts', async () => {
    const res = await page(`${base()}?tab=schema`);
    const row = (column: string) => res.text.split(`data-testid="schema-field" data-column="${column}"`)[1]?.split('</tr>')[0] ?? '';
    expect(row('temp')).toContain(`double ${RECORDS - MISSING}`);
    expect(row('count')).toContain(`int ${RECORDS}`);
    expect(row('when')).toContain(`date ${RECORDS}`);
    expect(row('station')).toContain(`string ${RECORDS}`);
  });

  it('reads text columns as text and dates as dates in the pandas snippet, and flattens in both snippets', async () => {
    const res = await page(base());
    const pandas = res.text.split('data-testid="pandas-snippet">')[1]?.split('</pre>')[0] ?? '';
    expect(pandas.replace(/&quot;/g, '"')).toMatch(/dtype=\{[^}]*"station": str/);
    expect(pandas.replace(/&quot;/g, '"')).toMatch(/for column in \[[^\]]*"when"[^\]]*\]:\n.*\n\s+df\[column\] = pd\.to_datetime/);
    const python = res.text.split('data-testid="python-snippet">')[1]?.split('</pre>')[0] ?? '';
    expect(python).toContain('to_dataframe(flatten=True)');
  });
});

/** A snippet's frame as Python sees it: its columns (sorted), each column's dtype, and the first record's values as text. */
async function frameOf(snippet: string): Promise<{ columns: string[]; dtypes: Record<string, string>; first: Record<string, string> }> {
  const probe = [
    'import json',
    'df = df.sort_values("n").reset_index(drop=True)',
    'print(json.dumps({"columns": sorted(df.columns), "dtypes": {c: str(t) for c, t in df.dtypes.items()}, "first": {c: str(v) for c, v in df.iloc[0].items()}}))',
  ].join('\n');
  const { stdout } = await promisify(execFile)(join(REPO, '.venv-client', 'bin', 'python'), ['-c', `${snippet}\n${probe}`], {
    env: { ...process.env, CYBERCOM_URL: app.url, CYBERCOM_TOKEN: token },
    timeout: 120_000,
  });
  return JSON.parse(stdout) as { columns: string[]; dtypes: Record<string, string>; first: Record<string, string> };
}

const unescape = (html: string): string =>
  html
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&');

describe('the snippets', () => {
  it('give the same frame: the same columns and types, text kept as text', async () => {
    const res = await page(base());
    const snippet = (id: string) => unescape(res.text.split(`data-testid="${id}">`)[1]?.split('</pre>')[0] ?? '');
    const [python, pandas] = [await frameOf(snippet('python-snippet')), await frameOf(snippet('pandas-snippet'))];
    expect(pandas.first.station).toBe('00000');
    expect(pandas.columns).toEqual(python.columns);
    expect(pandas.dtypes).toEqual(python.dtypes);
    expect(pandas.first).toEqual(python.first);
  }, 120_000);
});

describe('the page', () => {
  it('cuts long field names short, with the whole name as a tooltip', async () => {
    const res = await page(`${base()}?col=${LONG_NAME}`);
    expect(res.text).toContain(`title="${LONG_NAME}"`);
    const schema = await page(`${base()}?tab=schema`);
    expect(schema.text).toContain(`title="${LONG_NAME}"`);
  });

  it('has a favicon', async () => {
    const res = await fetch(new URL('/favicon.ico', app.url));
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^image\//);
    expect((await res.arrayBuffer()).byteLength).toBeGreaterThan(0);
    expect((await page(base())).text).toContain('rel="icon"');
  });
});
