/**
 * The data explorer through the real HTTP server and database: the table (dotted columns, sort
 * with its index hint, paging, the count, readable values), filters from rows, a typed query and
 * cell links, facets, the schema of a sample, the row view, exports and snippets; permissions
 * (403 for a user without read rights, nothing shown to anonymous callers); and hostile names and
 * values, fixed and generated, rendering inert.
 */
import { gzipSync } from 'node:zlib';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startTestApp, uniqueName, type TestApp } from '../../support/app.js';
import { FIXTURE_KINDS, fixtureWhen, insertFixture } from '../../support/explorer-fixture.js';
import { staticPath } from '../../../src/explorer/static-files.js';

const RECORDS = 6_000;
let app: TestApp;
let rootToken: string;
let readerToken: string;
let nobodyToken: string;
let db: string;
let catalogDb: string;
const col = 'readings';
const base = () => `/api/explore/data_store/${db}/${col}/`;

/** The total a table view says, as a number. */
const totalOf = (html: string): number => Number(/of ([\d\u202f]+) records?/.exec(textOf(html, 'summary'))?.[1]?.replace(/\u202f/g, ''));

const page = (path: string, token: string | undefined = readerToken) =>
  call(app.url, 'GET', path, { ...(token === undefined ? {} : { token }), accept: 'text/html' });

/** The text of an element by its data-testid, tags removed and entities of the test's interest decoded. */
function textOf(html: string, testId: string): string {
  const match = new RegExp(`data-testid="${testId}"[^>]*>([\\s\\S]*?)</(p|pre|table|section|textarea)>`).exec(html);
  return (match?.[1] ?? '')
    .replace(/<[^>]+>/g, '')
    .replace(/&quot;/g, '"')
    .replace(/&amp;/g, '&')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>');
}

beforeAll(async () => {
  catalogDb = uniqueName('cat');
  app = await startTestApp({ CATALOG_DATABASES: catalogDb });
  db = `${app.prefix}explore`;
  await app.users.createUser({ username: 'root', password: 'pw-root-12345', isSuperuser: true });
  rootToken = await app.users.tokenFor('root');
  await insertFixture(app.url, rootToken, db, col, RECORDS);
  const index = await call(app.url, 'POST', `/api/data_store/indexes/${db}/${col}/`, { token: rootToken, body: { keys: { when: 1 } } });
  expect(index.status, index.text).toBe(201);
  expect((await call(app.url, 'POST', `/api/data_store/data/${db}/`, { token: rootToken, body: { collection: 'secret' } })).status).toBe(
    201,
  );
  await app.users.createUser({
    username: 'reader',
    password: 'pw-reader-12345',
    permissions: [`data_store.${db}.${col}.safe`, `data_store.${db}.hostile.safe`],
  });
  readerToken = await app.users.tokenFor('reader');
  await app.users.createUser({ username: 'nobody', password: 'pw-nobody-12345', permissions: [] });
  nobodyToken = await app.users.tokenFor('nobody');
}, 180_000);

afterAll(async () => {
  if (app === undefined) return;
  await call(app.url, 'POST', '/api/data_store/data/', { token: rootToken, body: { database: db, action: 'delete' } }).catch(
    () => undefined,
  );
  await app.close();
});

describe('the table', () => {
  it("is linked from the collection's browsable page", async () => {
    const res = await page(`/api/data_store/data/${db}/${col}/`);
    expect(res.status).toBe(200);
    expect(res.text).toContain(`<a href="${base()}" class="related">Explore</a>`);
    const record = await page(`/api/data_store/data/${db}/`);
    expect(record.text).not.toContain('class="related"');
  });

  it('shows the first page with dotted columns, readable values and the exact count', async () => {
    const res = await page(base());
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/text\/html/);
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(textOf(res.text, 'summary')).toContain('1–25 of 6000 records');
    for (const column of ['_id', 'station.name', 'station.code', 'kind', 'when', 'reading.temp', 'reading.depth', 'loc']) {
      expect(res.text).toContain(`data-field="${column}"`);
    }
    expect(res.text).toContain('<time datetime="2024-01-01T00:00:00.000Z">2024-01-01</time>');
    expect(res.text).toContain('2024-01-01 01:00:00 UTC');
    expect(res.text).toMatch(/<code title="created [^"]+">[0-9a-f]{24}<\/code>/);
    expect(res.text).toContain('◉ 30.00000, -100.00000');
    expect(res.text).not.toContain('$date');
    expect(res.text).not.toContain('$oid"');
    expect((res.text.match(/data-testid="record-row"/g) ?? []).length).toBe(25);
    // No script at all: the page works without JavaScript.
    expect(res.text).not.toMatch(/<script/i);
  });

  it('sorts on the server by a header, and says when no index serves the sort', async () => {
    const res = await page(`${base()}?sort=-reading.temp`);
    expect(res.status).toBe(200);
    const temps = [...res.text.matchAll(/<td class="number">(-?[\d.]+)<span class="acts">/g)].map((m) => Number(m[1]));
    expect(temps[0]).toBe(39.9);
    expect(res.text).toContain('reading.temp ▼');
    expect(res.text).toContain('data-testid="sort-hint"');
    // Ties (many records share a temperature) are broken by _id: the pages of one view never overlap.
    const ids = async (n: number) =>
      [
        ...(await page(`${base()}?sort=reading.temp&page=${n}&size=100`)).text.matchAll(
          /data-testid="row-link"><code[^>]*>([0-9a-f]{24})</g,
        ),
      ].map((m) => m[1]);
    const [first, second] = [await ids(1), await ids(2)];
    expect(first.length + second.length).toBe(200);
    expect(new Set([...first, ...second]).size).toBe(200);
    expect(first).toEqual(await ids(1));
    const indexed = await page(`${base()}?sort=-when`);
    expect(indexed.text).not.toContain('data-testid="sort-hint"');
    expect(indexed.text).toContain(`<time datetime="${new Date(Date.UTC(2024, 0, 1) + (RECORDS - 1) * 3_600_000).toISOString()}">`);
  });

  it('pages with Next, keeping the view', async () => {
    const res = await page(`${base()}?sort=when&page=3&size=10`);
    expect(textOf(res.text, 'summary')).toContain('21–30 of 6000 records');
    expect(res.text).toContain('<time datetime="2024-01-01T20:00:00.000Z">');
    expect(res.text).toContain('href="/api/explore/data_store/' + db + '/' + col + '/?sort=when&amp;page=4&amp;size=10"');
  });

  it('shows a record whole as JSON from its _id', async () => {
    const list = await page(base());
    const href = /data-testid="row-link"|href="([^"]+)" data-testid="row-link"/.exec(list.text)?.[1];
    expect(href).toBeDefined();
    const res = await page(href as string);
    expect(res.status).toBe(200);
    expect(textOf(res.text, 'record-json')).toContain('"station": {');
    expect(textOf(res.text, 'record-json')).toContain('"coordinates": [');
  });
});

describe('filters', () => {
  it('filters by rows of field, operator and value, and shows the MongoDB query they make', async () => {
    const res = await page(`${base()}?f=kind&op=eq&v=rain&f=reading.depth&op=lt&v=500`);
    expect(res.status).toBe(200);
    const api = await call(
      app.url,
      'GET',
      `/api/data_store/data/${db}/${col}/?query=${encodeURIComponent(JSON.stringify({ filter: { kind: 'rain', 'reading.depth': { $lt: 500 } } }))}`,
      { token: readerToken },
    );
    expect(totalOf(res.text)).toBe(api.json.count);
    expect(api.json.count).toBeGreaterThan(100);
    const query = JSON.parse(textOf(res.text, 'query-text')) as unknown;
    expect(query).toEqual({ $and: [{ kind: 'rain' }, { 'reading.depth': { $lt: 500 } }] });
  });

  it('takes a typed MongoDB query, Extended JSON included', async () => {
    const q = JSON.stringify({ when: { $lt: { $date: '2024-01-02T00:00:00Z' } } });
    const res = await page(`${base()}?q=${encodeURIComponent(q)}`);
    expect(totalOf(res.text)).toBe(24);
  });

  it('offers "= this" links on cells whose value they match exactly', async () => {
    const res = await page(`${base()}?sort=when`);
    const link = /href="([^"]+)" title="= this" data-testid="cell-eq"/.exec(res.text.split('data-field="kind"')[1] ?? '');
    expect(link).not.toBeNull();
    const all = [...res.text.matchAll(/href="([^"]*f=kind[^"]*)" title="= this"/g)].map((m) => m[1]);
    const filtered = await page((all[0] as string).replace(/&amp;/g, '&'));
    expect(totalOf(filtered.text)).toBe(1_200);
  });

  it('offers a "month" link on date cells only, whose view is that calendar month (UTC), its records counted', async () => {
    // Records 725 to 749 by date: the last is 2024-02-01 05:00 UTC, the first of February's.
    const res = await page(`${base()}?sort=when&page=30`);
    const links = [...res.text.matchAll(/href="([^"]+)" title="this month \(UTC\)" data-testid="cell-month"/g)].map((m) =>
      (m[1] as string).replace(/&amp;/g, '&'),
    );
    // One a row: `when` is the only date column.
    expect(links).toHaveLength(25);
    const february = new URL(links.at(-1) as string, app.url);
    expect(february.searchParams.getAll('f')).toEqual(['when', 'when']);
    expect(february.searchParams.getAll('op')).toEqual(['gte', 'lt']);
    expect(february.searchParams.getAll('v')).toEqual(['{"$date":"2024-02-01T00:00:00.000Z"}', '{"$date":"2024-03-01T00:00:00.000Z"}']);
    expect(february.searchParams.get('page')).toBeNull();
    const inFebruary = Array.from({ length: RECORDS }, (_, i) => fixtureWhen(i)).filter(
      (when) => when.getUTCFullYear() === 2024 && when.getUTCMonth() === 1,
    ).length;
    expect(totalOf((await page(february.pathname + february.search)).text)).toBe(inFebruary);
  });

  it('answers a refused query with the reason beside the filter to fix', async () => {
    const res = await page(`${base()}?q=${encodeURIComponent('{"kind": {"$where": "1"}}')}`);
    expect(res.status).toBe(400);
    expect(res.text).toContain('data-testid="view-error"');
    expect(res.text).toContain('data-testid="query-form"');
    const bad = await page(`${base()}?q=${encodeURIComponent('{not json')}`);
    expect(bad.status).toBe(400);
    expect(textOf(bad.text, 'view-error')).toContain('not valid JSON');
    // Refused by the documents layer rather than the query parser: the same page, with its reason.
    const near = { loc: { $near: { $geometry: { type: 'Point', coordinates: [0, 0] } } } };
    const unindexed = await page(`${base()}?q=${encodeURIComponent(JSON.stringify(near))}`);
    expect(unindexed.status).toBe(400);
    expect(textOf(unindexed.text, 'view-error')).toContain('2dsphere');
  });

  it('gives the view as curl, Python, pandas and download links reading the same records', async () => {
    const res = await page(`${base()}?f=kind&op=eq&v=snow&sort=-when&col=_id&col=when&col=reading.temp`);
    const python = textOf(res.text, 'python-snippet');
    expect(python).toContain(`col = client.data_store["${db}"]["${col}"]`);
    expect(python).toContain('records = col.find(filter={"kind": "snow"}, sort=[("when", -1)])');
    expect(textOf(res.text, 'pandas-snippet')).toContain(
      'url = col.export_url("csv", filter={"kind": "snow"}, sort=[("when", -1)], fields=["_id", "when", "reading.temp"], expires_in=3600)',
    );
    expect(textOf(res.text, 'curl-snippet')).toContain(`curl -H "Authorization: Token $CYBERCOM_TOKEN"`);
    const csvHref = /href="([^"]+)" data-testid="csv-link"/.exec(res.text)?.[1]?.replace(/&amp;/g, '&') as string;
    const csv = await call(app.url, 'GET', csvHref, { token: readerToken, accept: 'text/csv' });
    expect(csv.status).toBe(200);
    const lines = csv.text.trim().split('\r\n');
    expect(lines[0]).toBe('_id,when,reading.temp');
    expect(lines.length).toBe(1 + 1_200);
    expect(lines[1]).toContain(new Date(Date.UTC(2024, 0, 1) + (RECORDS - 4) * 3_600_000).toISOString());
    const ndjsonHref = /href="([^"]+)" data-testid="ndjson-link"/.exec(res.text)?.[1]?.replace(/&amp;/g, '&') as string;
    const ndjson = await call(app.url, 'GET', ndjsonHref, { token: readerToken, accept: 'application/x-ndjson' });
    expect(ndjson.text.trim().split('\n').length).toBe(1_200);
  });
});

describe('facets and schema', () => {
  it('shows the top values of a facet with counts that filter when clicked, and suggests facets', async () => {
    const res = await page(`${base()}?facet=kind`);
    const facet = res.text.split('data-testid="facet" data-field="kind"')[1] ?? '';
    for (const kind of FIXTURE_KINDS) expect(facet).toMatch(new RegExp(`>&quot;|>${kind}<`));
    const counts = [...facet.split('</div>')[0]!.matchAll(/<span class="n">([\d\u202f]+)<\/span>/g)].map((m) =>
      Number(m[1]!.replace(/\u202f/g, '')),
    );
    expect(counts).toEqual([1_200, 1_200, 1_200, 1_200, 1_200]);
    const plain = await page(base());
    expect(plain.text).toContain('data-testid="suggested-facet">kind</a>');
  });

  it('profiles a $sample of 1,000 records: types, coverage, ranges, distinct values, within a second', async () => {
    const started = performance.now();
    const res = await page(`${base()}?tab=schema`);
    const elapsed = performance.now() - started;
    expect(res.status).toBe(200);
    expect(textOf(res.text, 'schema-summary')).toContain('random sample of 1000 records');
    expect(elapsed).toBeLessThan(1_000);
    const row = (column: string) => res.text.split(`data-testid="schema-field" data-column="${column}"`)[1]?.split('</tr>')[0] ?? '';
    const types = (column: string) => /data-testid="schema-types">([^<]*)</.exec(row(column))?.[1];
    expect(types('kind')).toBe('string 1000');
    expect(row('kind')).toContain('100%');
    expect(row('kind')).toContain('<td>5</td>');
    expect(types('when')).toBe('date 1000');
    // Temperatures were sent as JSON numbers, some with a fraction (doubles), some without (integers).
    expect(types('reading.temp')).toMatch(/^(double|int) \d+ · (double|int) \d+$/);
    expect(types('loc')).toBe('geo 1000');
    expect(row('_id')).toContain('(all different)');
  });
});

describe('histograms', () => {
  /** Each bar's link and count, from its tooltip. */
  const bars = (html: string, field: string) => {
    const box = html.split(`data-testid="histogram" data-field="${field}"`)[1]?.split('</svg>')[0] ?? '';
    return [...box.matchAll(/<a href="([^"]+)" data-testid="histogram-bar"><title>[^<]*: ([\d\u202f]+)<\/title>/g)].map((m) => ({
      href: (m[1] as string).replace(/&amp;/g, '&'),
      n: Number((m[2] as string).replace(/\u202f/g, '')),
    }));
  };

  it('bins a number field over its range; a bar filters by its range', async () => {
    const res = await page(`${base()}?hist=reading.temp`);
    expect(res.status).toBe(200);
    const found = bars(res.text, 'reading.temp');
    expect(found.length).toBe(24);
    expect(found.reduce((sum, bar) => sum + bar.n, 0)).toBe(RECORDS);
    const bar = found[5] as { href: string; n: number };
    expect(totalOf((await page(bar.href)).text)).toBe(bar.n);
    const lastBar = found.at(-1) as { href: string; n: number };
    expect(totalOf((await page(lastBar.href)).text)).toBe(lastBar.n);
  });

  it('bins a date field, and suggests histograms for number and date fields', async () => {
    const res = await page(`${base()}?hist=when&f=kind&op=eq&v=fog`);
    const found = bars(res.text, 'when');
    expect(found.reduce((sum, bar) => sum + bar.n, 0)).toBe(1_200);
    expect(totalOf((await page((found[0] as { href: string }).href)).text)).toBe((found[0] as { n: number }).n);
    expect(res.text).toContain('data-testid="suggested-histogram">reading.temp</a>');
    expect((await page(`${base()}?hist=kind`)).text).toContain('No numbers or dates');
  });

  it("carries the bins' edges for the brush, whose script is loaded only where a histogram is drawn", async () => {
    const res = await page(`${base()}?hist=reading.temp&f=kind&op=eq&v=fog`);
    const nonce = /'nonce-([^']+)'/.exec(res.headers.get('content-security-policy') ?? '')?.[1];
    expect(res.text).toContain(`<script src="${staticPath('histogram.js')}" nonce="${nonce}"></script>`);
    const svg = /<svg [^>]*data-brush="true"[^>]*>/.exec(res.text)?.[0] ?? '';
    const attribute = (name: string) =>
      /* entities decoded */ (new RegExp(` ${name}="([^"]*)"`).exec(svg)?.[1] ?? '').replace(/&quot;/g, '"').replace(/&amp;/g, '&');
    expect(attribute('data-field')).toBe('reading.temp');
    expect(attribute('data-kind')).toBe('number');
    expect(attribute('data-view-href')).toBe(`${base()}?f=kind&op=eq&v=fog&hist=reading.temp`);
    const edges = JSON.parse(attribute('data-edges')) as number[];
    const found = bars(res.text, 'reading.temp');
    expect(edges.length).toBe(found.length + 1);
    // The range the brush gives for bins 2..6 counts what those bars count.
    const brushed = `${base()}?f=kind&op=eq&v=fog&hist=reading.temp&f=reading.temp&op=gte&v=${edges[2]}&f=reading.temp&op=lt&v=${edges[7]}`;
    expect(totalOf((await page(brushed)).text)).toBe(found.slice(2, 7).reduce((sum, bar) => sum + bar.n, 0));
    // Without a histogram, or with one that has no numbers, no script.
    expect((await page(`${base()}?hist=kind`)).text).not.toMatch(/<script/i);
    const served = await call(app.url, 'GET', '/api/explore/static/histogram.js', { accept: '*/*' });
    expect(served.status).toBe(200);
    expect(served.headers.get('content-type')).toContain('application/javascript');
  });
});

describe('the chart and the map', () => {
  it("carry the view's filter rows and downloads: the CSV link gives exactly the records the filter matches", async () => {
    const hail = (
      await page(
        `/api/data_store/data/${db}/${col}/?format=json&page_size=1&query=${encodeURIComponent(JSON.stringify({ filter: { kind: 'hail' } }))}`,
        rootToken,
      )
    ).json as { count: number };
    expect(hail.count).toBeGreaterThan(0);
    expect(hail.count).toBeLessThan(RECORDS);
    for (const tab of ['chart&x=when&y=reading.temp', 'map&geo=loc']) {
      const res = await page(`${base()}?tab=${tab}&f=kind&op=eq&v=hail`);
      expect(res.status, res.text.slice(0, 300)).toBe(200);
      expect(res.text).toContain('data-testid="filter-form"');
      expect(res.text).toMatch(/data-testid="filter-row"><input[^>]*name="f"[^>]*value="kind"/);
      const csv = /href="([^"]+)" data-testid="csv-link"/.exec(res.text)?.[1]?.replace(/&amp;/g, '&');
      expect(csv, tab).toBeDefined();
      const download = await call(app.url, 'GET', csv as string, { token: readerToken, accept: 'text/csv' });
      expect(download.status, download.text.slice(0, 300)).toBe(200);
      const lines = download.text.trim().split('\n');
      expect(lines.length - 1, tab).toBe(hail.count);
    }
  });
});

describe('the chart', () => {
  it('splits its points by a chosen field: one series per value, each point in exactly one, a filtered value alone', async () => {
    const chartData = (html: string) => {
      const attribute = (name: string) =>
        JSON.parse((new RegExp(`${name}="([^"]+)"`).exec(html)?.[1] ?? '').replace(/&quot;/g, '"').replace(/&amp;/g, '&')) as unknown;
      return { series: attribute('data-series') as string[], points: attribute('data-points') as (number | null)[][] };
    };
    const split = await page(`${base()}?tab=chart&x=when&y=reading.temp&by=kind`);
    expect(split.status).toBe(200);
    expect(split.text).toMatch(/<option value="kind" selected>/);
    const { series, points } = chartData(split.text);
    expect([...series].sort()).toEqual([...FIXTURE_KINDS].sort());
    const [xs, ...ys] = points;
    expect(ys).toHaveLength(series.length);
    for (let i = 0; i < xs!.length; i++) expect(ys.filter((column) => column[i] !== null)).toHaveLength(1);
    expect(textOf(split.text, 'chart-summary')).toContain(`split by kind (${series.length} series)`);

    const hail = chartData((await page(`${base()}?tab=chart&x=when&y=reading.temp&by=kind&f=kind&op=eq&v=hail`)).text);
    expect(hail.series).toEqual(['hail']);
  });

  it('carries a sample of points in the order of x, and loads uPlot and its script from the service', async () => {
    const res = await page(`${base()}?tab=chart&x=when&y=reading.temp&f=kind&op=eq&v=hail`);
    expect(res.status).toBe(200);
    const points = JSON.parse((/data-points="([^"]+)"/.exec(res.text)?.[1] ?? '').replace(/&quot;/g, '"').replace(/&amp;/g, '&')) as [
      number[],
      number[],
    ];
    expect(points[0].length).toBe(1_200);
    expect(points[0]).toEqual([...points[0]].sort((p, q) => p - q));
    expect(points[0][0]).toBe(Date.UTC(2024, 0, 1, 2) / 1000);
    expect(res.text).toContain('data-x-kind="date"');
    for (const [file, type] of [
      ['uplot.js', 'application/javascript'],
      ['uplot.css', 'text/css'],
      ['chart.js', 'application/javascript'],
    ] as const) {
      expect(res.text).toContain(staticPath(file));
      const served = await call(app.url, 'GET', `/api/explore/static/${file}`, { accept: '*/*' });
      expect(served.status).toBe(200);
      expect(served.headers.get('content-type')).toContain(type);
      expect(
        (await call(app.url, 'GET', `/api/explore/static/${file}`, { headers: { 'if-none-match': served.headers.get('etag') as string } }))
          .status,
      ).toBe(304);
    }
    // The explorer's whole script budget: 150 KB gzipped.
    let gzipped = 0;
    for (const file of ['uplot.js', 'chart.js', 'histogram.js']) {
      gzipped += gzipSync((await call(app.url, 'GET', `/api/explore/static/${file}`, { accept: '*/*' })).text).length;
    }
    expect(gzipped).toBeLessThan(150 * 1024);
    const choose = await page(`${base()}?tab=chart`);
    expect(choose.text).toContain('<option value="reading.temp">');
    expect(choose.text).not.toMatch(/<script/);
  });
});

describe('permissions', () => {
  it('answers a user without read rights, and anonymous callers, with an error page and no records', async () => {
    const denied = await page(base(), nobodyToken);
    expect(denied.status).toBe(403);
    expect(denied.headers.get('content-type')).toMatch(/text\/html/);
    expect(denied.text).not.toContain('Station');
    // Anonymous callers get what the API gives them for the same collection (the area's anonymous-read setting).
    const secret = await call(app.url, 'GET', `/api/explore/data_store/${db}/secret/`, { accept: 'text/html' });
    const apiSecret = await call(app.url, 'GET', `/api/data_store/data/${db}/secret/`, { accept: 'text/html' });
    expect(secret.status).toBe(apiSecret.status);
    expect([401, 403]).toContain(secret.status);
    const otherCollection = await page(`/api/explore/data_store/${db}/secret/`);
    expect(otherCollection.status).toBe(403);
    const record = await page(`/api/explore/data_store/${db}/${col}/000000000000000000000000/`, nobodyToken);
    expect(record.status).toBe(403);
    for (const tab of ['schema']) expect((await page(`${base()}?tab=${tab}&facet=kind`, nobodyToken)).status).toBe(403);
  });

  it('lists only the databases and collections the caller may see, each linked to its explorer view', async () => {
    const area = await page('/api/explore/data_store/');
    expect(area.status).toBe(200);
    expect(area.text).toContain(`<a href="/api/explore/data_store/${db}/">${db}</a>`);
    const listing = await page(`/api/explore/data_store/${db}/`);
    expect(listing.status).toBe(200);
    expect(listing.text).toContain(`<a href="${base()}">${col}</a>`);
    expect(listing.text).not.toContain('>secret<');
    const rootListing = await page(`/api/explore/data_store/${db}/`, rootToken);
    expect(rootListing.text).toContain('>secret<');
    const denied = await page(`/api/explore/data_store/${db}/`, nobodyToken);
    expect([403, 404]).toContain(denied.status);
    expect(denied.text).not.toContain(col);
    expect((await page('/api/explore/data_store/', nobodyToken)).text).not.toContain(db);
  });

  it('explores the catalog area under its own permissions', async () => {
    const created = await call(app.url, 'POST', `/api/catalog/data/${catalogDb}/`, { token: rootToken, body: { collection: 'entries' } });
    expect(created.status).toBe(201);
    await call(app.url, 'POST', `/api/catalog/data/${catalogDb}/entries/`, { token: rootToken, body: { title: 'Mesonet', year: 1994 } });
    const root = await page(`/api/explore/catalog/${catalogDb}/entries/`, rootToken);
    expect(root.status).toBe(200);
    expect(root.text).toContain('Mesonet');
    expect((await page(`/api/explore/catalog/${catalogDb}/entries/`, readerToken)).status).toBe(403);
    expect((await page(`/api/explore/elsewhere/${catalogDb}/entries/`, rootToken)).status).toBe(400);
  });
});

describe('hostile names and values', () => {
  const hostileKeys = ['<script>alert(1)</script>', '"><img src=x onerror=alert(2)>', 'a.b', "it's", 'ünïcödé'];
  beforeAll(async () => {
    const store = app.ctx.documents.dataStore.store;
    let deep: Record<string, unknown> = { end: '<b>deep</b>' };
    for (let i = 0; i < 80; i += 1) deep = { [`l${i}`]: deep };
    const records: Record<string, unknown>[] = [
      Object.fromEntries(hostileKeys.map((key, i) => [key, `<script>alert(${i})</script>`])),
      { _id: '<svg onload=alert(3)>', text: 'x'.repeat(1024 * 1024), quote: `"'<>&` },
      { _id: 'deep', deep },
      { _id: 'geo-evil', loc: { type: 'Point', coordinates: ['<b>', 1] }, n: { type: '<script>', coordinates: [] } },
    ];
    await store.insertMany(db, 'hostile', records);
    try {
      await store.insertMany(db, 'hostile', [{ _id: 'dollar', $where: '<script>alert(4)</script>' }]);
    } catch {
      // An engine that refuses "$" keys in stored records leaves nothing of the kind to show.
    }
  });

  const hostileBase = () => `/api/explore/data_store/${db}/hostile/`;
  const assertInert = (html: string) => {
    // The only scripts are the chart's own files, served by the service.
    expect(
      html.replace(/<script src="\/api\/explore\/static\/(uplot|chart)\.[A-Za-z0-9]{12}\.js" nonce="[^"]+"><\/script>/g, ''),
    ).not.toMatch(/<script/i);
    expect(html).not.toMatch(/<img /i);
    expect(html).not.toMatch(/<svg/i);
    expect(html).not.toMatch(/<b>deep/i);
    // An event-handler attribute on any tag (attribute values are quoted, their quotes escaped).
    expect(html).not.toMatch(/<[a-z][^\s>]*(?:\s+[\w:-]+(?:="[^"]*")?)*\s+on\w+\s*=/i);
  };

  it('renders every view of hostile keys and values inert', async () => {
    for (const search of ['', '?tab=schema', '?tab=chart&x=deep&y=deep', `?facet=${encodeURIComponent('ünïcödé')}`, '?size=100']) {
      const res = await page(hostileBase() + search);
      expect(res.status, search).toBe(200);
      assertInert(res.text);
    }
    const table = await page(hostileBase());
    expect(table.text).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
    expect(table.text).toContain('(1\u202f048\u202f576 characters)');
    expect(table.text.length).toBeLessThan(200_000);
    const record = await page(`${hostileBase()}${encodeURIComponent('<svg onload=alert(3)>')}/`);
    expect(record.status).toBe(200);
    assertInert(record.text);
    const deep = await page(`${hostileBase()}deep/`);
    expect(deep.status).toBe(200);
    assertInert(deep.text);
  });

  it('answers generated hostile view URLs below 500 and renders them inert', async () => {
    const hostileText = fc.oneof(
      fc.string({ maxLength: 40 }),
      fc.constantFrom(
        '<script>alert(1)</script>',
        '"><img src=x onerror=alert(1)>',
        '$where',
        'a..b',
        '.',
        '$',
        '\u0000',
        '{"$where":"1"}',
        '{',
        'x'.repeat(5000),
        'chart',
        'schema',
        'reading.temp',
        'when',
        'kind',
      ),
    );
    const params = fc.array(
      fc.tuple(fc.constantFrom('f', 'op', 'v', 'q', 'sort', 'col', 'facet', 'hist', 'x', 'y', 'page', 'size', 'tab', 'other'), hostileText),
      { maxLength: 8 },
    );
    await fc.assert(
      fc.asyncProperty(params, fc.boolean(), async (pairs, onHostile) => {
        const search = new URLSearchParams(pairs).toString();
        const res = await page(`${onHostile ? hostileBase() : base()}?${search}`);
        expect(res.status, search).toBeLessThan(500);
        assertInert(res.text);
      }),
      { numRuns: Number(process.env.FUZZ_RUNS ?? 150), seed: 20261128 },
    );
  });
});
