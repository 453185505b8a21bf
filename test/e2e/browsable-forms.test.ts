/**
 * The browsable page's script in Chromium, for the form kinds the main scenario does not use:
 * run a task (args/kwargs/tags/queue), change and delete a record, create and delete a database,
 * create and drop an index.
 * The pages are the real renderer's output; the API's answers are canned by request
 * interception (a task run needs a live worker, which is the queue tests' business), and every
 * request the page makes is recorded and checked: method, JSON body and CSRF header.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page, Route } from 'playwright-core';
import { htmlDocument } from '../../src/render/html.js';
import type { PageForm } from '../../src/render/html-forms.js';
import { browserScript } from '../../src/http/browser-bundle.js';
import { browsableScriptPath } from '../../src/render/html-script.js';
import { IntegralDouble, type PlainValue } from '../../src/render/types.js';
import { contentSecurityPolicy } from '../../src/http/security-headers.js';
import { launchChromium } from './support.js';

/** Never resolved: every request is answered by the routes below. */
const ORIGIN = 'http://browsable.test';
const CSRF = 'csrf-token-value-0123456789abcdefghijklmnop';
const NONCE = 'bm9uY2Utbm9uY2Utbm9uY2U=';

let browser: Browser;

beforeAll(async () => {
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
});

interface Sent {
  method: string;
  url: string;
  body: unknown;
  csrf: string | undefined;
  contentType: string | undefined;
}

/** A page at `path` rendered with `form` and `value`; API calls are recorded and answered by `answer`. */
async function openPage(
  path: string,
  form: PageForm,
  value: PlainValue,
  answer: (sent: Sent) => { status: number; body: unknown },
): Promise<{ page: Page; sent: Sent[]; sentTexts: string[] }> {
  const context = await browser.newContext();
  await context.addCookies([{ name: 'csrftoken', value: CSRF, url: ORIGIN }]);
  const page = await context.newPage();
  const sent: Sent[] = [];
  /** Each body as sent, before parsing. */
  const sentTexts: string[] = [];
  const html = htmlDocument(200, {
    title: 'Forms',
    requestUrl: `${ORIGIN}${path}`,
    breadcrumbs: [{ name: 'Api Root', href: '/api/' }],
    user: { username: 'tester' },
    method: 'GET',
    cspNonce: NONCE,
    form,
  }).whole(value);
  await context.route(`${ORIGIN}/**`, async (route: Route) => {
    const request = route.request();
    const url = new URL(request.url());
    if (url.pathname === browsableScriptPath()) {
      await route.fulfill({ status: 200, contentType: 'application/javascript', body: browserScript('browsable') });
    } else if (request.method() === 'GET') {
      await route.fulfill({
        status: 200,
        contentType: 'text/html',
        headers: { 'content-security-policy': contentSecurityPolicy(NONCE) },
        body: html,
      });
    } else {
      const headers = request.headers();
      const entry: Sent = {
        method: request.method(),
        url: url.pathname,
        body: request.postData() === null ? undefined : JSON.parse(request.postData() as string),
        csrf: headers['x-csrftoken'],
        contentType: headers['content-type'],
      };
      sent.push(entry);
      sentTexts.push(request.postData() ?? '');
      const reply = answer(entry);
      await route.fulfill({ status: reply.status, contentType: 'application/json', body: JSON.stringify(reply.body) });
    }
  });
  await page.goto(`${ORIGIN}${path}`);
  await page.locator('form[data-browsable]').waitFor({ state: 'visible' });
  return { page, sent, sentTexts };
}

const status = (page: Page) => page.locator('.result .status').textContent();

describe('the browsable page forms', () => {
  it('runs a task with args, kwargs, tags and queue', async () => {
    const path = '/api/queue/run/proj.tasks.add/';
    const { page, sent } = await openPage(
      path,
      { kind: 'task-run', postUrl: `${ORIGIN}${path}`, task: 'proj.tasks.add' },
      { task: 'proj.tasks.add' },
      () => ({
        status: 202,
        body: { task_id: 'abc', status: 'PENDING', result_url: `${ORIGIN}/api/queue/task/abc/` },
      }),
    );
    await page.fill('textarea[name="args"]', '[2, 3]');
    await page.fill('textarea[name="kwargs"]', '{"note": "</textarea>"}');
    await page.fill('input[name="tags"]', 'demo, browser ,');
    await page.fill('input[name="queue"]', 'fast');
    await page.getByRole('button', { name: 'Run' }).click();
    await expect.poll(() => status(page)).toBe('HTTP 202 Accepted');
    expect(sent).toEqual([
      {
        method: 'POST',
        url: path,
        body: { function: 'proj.tasks.add', args: [2, 3], kwargs: { note: '</textarea>' }, tags: ['demo', 'browser'], queue: 'fast' },
        csrf: CSRF,
        contentType: 'application/json',
      },
    ]);
    expect(await page.getByRole('link', { name: 'Follow this run' }).getAttribute('href')).toBe(`${ORIGIN}/api/queue/task/abc/`);
  });

  it('checks the JSON before sending anything', async () => {
    const path = '/api/queue/run/t/';
    const { page, sent } = await openPage(path, { kind: 'task-run', postUrl: path, task: 't' }, {}, () => ({ status: 500, body: {} }));
    await page.fill('textarea[name="kwargs"]', '[1]');
    await page.getByRole('button', { name: 'Run' }).click();
    await expect.poll(() => page.locator('.result .body').textContent()).toBe('kwargs must be a JSON object.');
    expect(await status(page)).toBe('Not sent');
    expect(sent).toEqual([]);
  });

  it('runs a task from one field per parameter of its signature, defaults pre-filled', async () => {
    const path = '/api/queue/run/proj.scale/';
    const signature = {
      text: "(values: list, factor: float = 2.0, *, label='scaled', since=datetime.date(2024, 1, 2), **options)",
      parameters: [
        { name: 'values', kind: 'positional_or_keyword', annotation: 'list' },
        { name: 'factor', kind: 'positional_or_keyword', default: 2, annotation: 'float' },
        { name: 'label', kind: 'keyword_only', default: 'scaled' },
        { name: 'since', kind: 'keyword_only', default: 'datetime.date(2024, 1, 2)', defaultIsRepr: true },
        { name: 'options', kind: 'var_keyword' },
      ],
    };
    const { page, sent } = await openPage(
      path,
      { kind: 'task-run', postUrl: path, task: 'proj.scale', doc: 'Multiply each value by factor.', signature },
      {},
      () => ({ status: 202, body: { task_id: 'abc', status: 'PENDING', result_url: `${ORIGIN}/api/queue/task/abc/` } }),
    );
    expect(await page.locator('.api-form .doc').textContent()).toBe('Multiply each value by factor.');
    expect(await page.locator('input[data-param-name="factor"]').inputValue()).toBe('2');
    expect(await page.locator('input[data-param-name="label"]').inputValue()).toBe('"scaled"');
    const run = () => page.getByRole('button', { name: 'Run' }).click();

    // A parameter without a default must be given.
    await run();
    await expect.poll(() => page.locator('.result .body').textContent()).toBe('values is required.');
    expect(sent).toEqual([]);

    await page.fill('input[data-param-name="values"]', '[1, 2]');
    await page.fill('input[data-param-name="label"]', '"x"');
    await page.fill('input[data-param-name="options"]', '{"extra": true}');
    await run();
    await expect.poll(() => status(page)).toBe('HTTP 202 Accepted');
    // Positional while every earlier one is given; the empty `since` is left to the task's default.
    expect(sent.map((s) => s.body)).toEqual([{ function: 'proj.scale', args: [[1, 2], 2], kwargs: { label: 'x', extra: true }, tags: [] }]);

    // Once a positional parameter is left empty, later ones go by name.
    await page.fill('input[data-param-name="values"]', '[3]');
    await page.fill('input[data-param-name="factor"]', '');
    await page.fill('input[data-param-name="options"]', '');
    await page.fill('input[data-param-name="since"]', '"2025-01-01"');
    await run();
    await expect.poll(() => sent.length).toBe(2);
    expect(sent[1]?.body).toEqual({ function: 'proj.scale', args: [[3]], kwargs: { label: 'x', since: '2025-01-01' }, tags: [] });
  });

  it('sends a positional-only parameter only while the earlier ones are given', async () => {
    const path = '/api/queue/run/t/';
    const signature = {
      text: '(a = 1, b = 2, /, *rest)',
      parameters: [
        { name: 'a', kind: 'positional_only', default: 1 },
        { name: 'b', kind: 'positional_only', default: 2 },
        { name: 'rest', kind: 'var_positional' },
      ],
    };
    const { page, sent } = await openPage(path, { kind: 'task-run', postUrl: path, task: 't', signature }, {}, () => ({
      status: 500,
      body: {},
    }));
    await page.fill('input[data-param-name="a"]', '');
    await page.getByRole('button', { name: 'Run' }).click();
    await expect.poll(() => page.locator('.result .body').textContent()).toBe('b cannot be sent while a is left empty.');
    await page.fill('input[data-param-name="a"]', '0');
    await page.fill('input[data-param-name="rest"]', '{"not": "an array"}');
    await page.getByRole('button', { name: 'Run' }).click();
    await expect.poll(() => page.locator('.result .body').textContent()).toBe('rest must be a JSON array.');
    expect(await status(page)).toBe('Not sent');
    expect(sent).toEqual([]);
  });

  it('changes a record (prefilled from the page) and deletes it after confirmation', async () => {
    const path = '/api/data_store/data/lab/samples/6b03bf0054327916b1300b18/';
    const record = { _id: '6b03bf0054327916b1300b18', sample: 's-1', note: '<b>x</b>' };
    const { page, sent } = await openPage(path, { kind: 'record', postUrl: path }, record, (s) =>
      s.method === 'DELETE' ? { status: 200, body: { deleted: record._id } } : { status: 200, body: { ...record, depth: 5 } },
    );
    const content = page.locator('textarea[name="content"]');
    expect(JSON.parse(await content.inputValue())).toEqual(record);
    await content.fill('{"depth": 5}');
    await page.getByRole('button', { name: 'PATCH' }).click();
    await expect.poll(() => status(page)).toBe('HTTP 200 OK');
    page.once('dialog', (dialog) => void dialog.accept());
    await page.getByRole('button', { name: 'DELETE' }).click();
    await expect.poll(() => sent.length).toBe(2);
    expect(sent.map((s) => [s.method, s.body, s.csrf])).toEqual([
      ['PATCH', { depth: 5 }, CSRF],
      ['DELETE', undefined, CSRF],
    ]);
    await expect
      .poll(() => page.getByRole('link', { name: 'Back to the collection' }).getAttribute('href'))
      .toBe(`${ORIGIN}/api/data_store/data/lab/samples/`);
  });

  it('keeps a double a double: the record is prefilled as shown (3.0) and sent as typed (4.0)', async () => {
    const path = '/api/data_store/data/lab/samples/r1/';
    const { page, sentTexts } = await openPage(
      path,
      { kind: 'record', postUrl: path },
      { _id: 'r1', depth: new IntegralDouble(3) },
      () => ({
        status: 200,
        body: {},
      }),
    );
    const content = page.locator('textarea[name="content"]');
    expect(await content.inputValue()).toContain('"depth": 3.0');
    await content.fill('{"depth": 4.0}');
    await page.getByRole('button', { name: 'PATCH' }).click();
    await expect.poll(() => sentTexts.length).toBe(1);
    expect(sentTexts).toEqual(['{"depth": 4.0}']);
  });

  it('creates an index from its JSON, and drops one by name when confirmed', async () => {
    const path = '/api/data_store/indexes/lab/samples/';
    const { page, sent } = await openPage(
      path,
      { kind: 'indexes', postUrl: path },
      { indexes: [{ name: '_id_', key: { _id: 1 } }] },
      (s) => (s.method === 'DELETE' ? { status: 200, body: { deleted: 'depth 1' } } : { status: 201, body: { name: 'depth_1' } }),
    );
    await page.fill('textarea[name="content"]', '{"keys": [["depth", 1], ["site", -1]], "unique": true}');
    await page.getByRole('button', { name: 'Create' }).click();
    await expect.poll(() => status(page)).toBe('HTTP 201 Created');
    await page.getByRole('button', { name: 'Drop' }).click();
    await expect.poll(() => page.locator('.result .body').textContent()).toBe('Enter the name of the index to drop.');
    await page.fill('input[name="index"]', 'depth 1');
    page.once('dialog', (dialog) => void dialog.dismiss());
    await page.getByRole('button', { name: 'Drop' }).click();
    page.once('dialog', (dialog) => void dialog.accept());
    await page.getByRole('button', { name: 'Drop' }).click();
    await expect.poll(() => sent.length).toBe(2);
    expect(sent.map((s) => [s.method, s.url, s.body, s.csrf])).toEqual([
      [
        'POST',
        path,
        {
          keys: [
            ['depth', 1],
            ['site', -1],
          ],
          unique: true,
        },
        CSRF,
      ],
      ['DELETE', `${path}depth%201/`, undefined, CSRF],
    ]);
  });

  it('creates a database, and deletes one only when confirmed', async () => {
    const path = '/api/data_store/data/';
    const { page, sent } = await openPage(path, { kind: 'databases', postUrl: path }, { count: 0, results: [] }, (s) =>
      (s.body as { action?: string }).action === 'delete'
        ? { status: 200, body: { deleted: 'lab' } }
        : { status: 201, body: { database: 'lab', url: `${ORIGIN}/api/data_store/data/lab/` } },
    );
    await page.fill('input[name="database"]', 'lab');
    await page.getByRole('button', { name: 'Create' }).click();
    await expect.poll(() => status(page)).toBe('HTTP 201 Created');
    expect(await page.getByRole('link', { name: 'Open it' }).getAttribute('href')).toBe(`${ORIGIN}/api/data_store/data/lab/`);
    page.once('dialog', (dialog) => void dialog.dismiss());
    await page.getByRole('button', { name: 'Delete' }).click();
    page.once('dialog', (dialog) => void dialog.accept());
    await page.getByRole('button', { name: 'Delete' }).click();
    await expect.poll(() => sent.length).toBe(2);
    expect(sent.map((s) => s.body)).toEqual([{ database: 'lab' }, { database: 'lab', action: 'delete' }]);
  });
});
