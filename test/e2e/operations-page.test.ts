/**
 * The admin site's Operations page in a real browser (Debian's Chromium through playwright-core),
 * against the real service, database and broker, with two real TypeScript workers: the page lists
 * the running workers and their queue, draws the outcome chart, shows a failed task with its
 * traceback, terminates a running task after asking for confirmation, and shows a worker offline
 * once it stops. Every request stays on this machine and nothing trips the Content-Security-Policy.
 * Screenshots go to test-output/screenshots/ (docs/screenshots/ with UPDATE_DOC_SCREENSHOTS=1).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import type { Worker } from '../../src/worker/worker.js';
import { call, startTestApp, type TestApp } from '../support/app.js';
import { startWorker } from '../integration/queue/support.js';
import { until } from '../support/until.js';
import { externalRequests, launchChromium, screenshot, signInThrough, watchedPage, type Watched } from './support.js';

const PAGE = '/api/admin/pages/operations';

let app: TestApp;
let browser: Browser;
let admin: Watched;
let steady: { worker: Worker; queue: string; nodeName: string };
let leaving: { worker: Worker; queue: string; nodeName: string };
let rootToken: string;

const submit = (task: string, args: unknown[], queue: string, wait?: number) =>
  call(app.url, 'POST', `/api/queue/run/${task}/${wait === undefined ? '' : `?wait=${wait}`}`, {
    token: rootToken,
    body: { function: task, queue, args, kwargs: {}, tags: ['operations-page'] },
  });

beforeAll(async () => {
  app = await startTestApp({ LOGIN_MAX_FAILURES: '1000', TASK_WAIT_MAX_S: '30' });
  await app.users.ensureSuperuser({ username: 'root', email: 'root@example.org', password: 'root-pass-123' });
  rootToken = await app.users.tokenFor('root');
  steady = await startWorker(app.ctx.settings.serviceDatabase);
  leaving = await startWorker(app.ctx.settings.serviceDatabase);
  await until(
    async () => {
      const res = await call(app.url, 'GET', '/api/queue/?refresh=true&page_size=0', { token: rootToken });
      return res.json?.queues?.includes(steady.queue) === true && res.json?.queues?.includes(leaving.queue) === true;
    },
    20_000,
    'the workers to be listed',
  );
  browser = await launchChromium();
  admin = await watchedPage(browser);
});

afterAll(async () => {
  await browser?.close();
  await steady?.worker.close();
  await leaving?.worker.close();
  if (app !== undefined) {
    await app.ctx.serviceDb.dropDatabase().catch(() => undefined);
    await app.close();
  }
});

const workerRow = (node: string) => admin.page.locator(`[data-testid="worker-row"][data-node="${node}"]`);

describe('the Operations page', () => {
  it('is reached through the login and lists the running workers and their queues', async () => {
    const { page } = admin;
    await signInThrough(page, `${app.url}${PAGE}`, 'root', 'root-pass-123');
    expect(new URL(page.url()).pathname).toBe(PAGE);
    await page.getByTestId('operations-title').waitFor();
    // The sidebar links to it.
    await page.getByRole('link', { name: 'Operations' }).first().waitFor();
    for (const w of [steady, leaving]) {
      await expect.poll(() => workerRow(w.nodeName).getAttribute('data-state'), { timeout: 20_000 }).toBe('online');
      await expect.poll(() => workerRow(w.nodeName).textContent(), { timeout: 20_000 }).toContain(w.queue);
      await page.locator(`[data-testid="queue-row"][data-queue="${w.queue}"]`).waitFor();
    }
    // The chart is drawn by the bundled uPlot.
    await page.locator('[data-testid="outcome-chart"] canvas').first().waitFor();
  });

  it('shows a failed task with its arguments and traceback, and counts it in the chart', async () => {
    const { page } = admin;
    for (const n of [1, 2, 3]) expect((await submit('tasks.add', [n, n], steady.queue, 20)).json.status).toBe('SUCCESS');
    const failed = await submit('tasks.fail', ['the sensor went offline'], steady.queue, 20);
    expect(failed.json.status).toBe('FAILURE');
    const failure = page.locator(`[data-testid="failure"][data-task-id="${failed.json.task_id}"]`);
    await failure.waitFor({ timeout: 20_000 });
    expect(await failure.textContent()).toContain('tasks.fail — Exception: the sensor went offline');
    expect(await failure.textContent()).toContain('args ["the sensor went offline"]');
    const traceback = failure.getByTestId('traceback');
    expect(await traceback.isVisible()).toBe(true);
    expect(await traceback.textContent()).toContain('the sensor went offline');
    await expect
      .poll(() => page.getByTestId('outcome-totals').textContent(), { timeout: 20_000 })
      .toMatch(/Last hour: [3-9]\d* succeeded, [1-9]\d* failed\./);
    // The admin's content scrolls inside its own pane: a tall window shows the whole page.
    await page.setViewportSize({ width: 1440, height: 2100 });
    await screenshot(page, 'operations-overview');
    await page.setViewportSize({ width: 1440, height: 900 });
  });

  it('terminates a running task after asking for confirmation', async () => {
    const { page } = admin;
    const submitted = await submit('tasks.sleep', [60], steady.queue);
    expect(submitted.status).toBe(202);
    const id = submitted.json.task_id as string;
    const row = page.locator(`[data-testid="running-row"][data-task-id="${id}"]`);
    await row.waitFor({ timeout: 20_000 });
    await row.getByTestId('terminate').click();
    const confirm = page.getByTestId('revoke-confirm');
    await confirm.waitFor();
    expect(await confirm.textContent()).toContain(`Terminate task ${id} (tasks.sleep)?`);
    await screenshot(page, 'operations-revoke-confirm');
    // Cancelling does nothing.
    await page.getByTestId('revoke-confirm-no').click();
    await confirm.waitFor({ state: 'detached' });
    expect((await app.ctx.queue!.results.get(id)).status).toBe('STARTED');

    await row.getByTestId('terminate').click();
    await page.getByTestId('revoke-confirm-yes').click();
    await expect.poll(() => page.getByTestId('revoke-notice').textContent()).toContain(`Task ${id} terminated (state: REVOKED).`);
    expect((await app.ctx.queue!.results.get(id)).status).toBe('REVOKED');
    await row.waitFor({ state: 'detached', timeout: 20_000 });
  });

  it('shows a worker offline once it stops', async () => {
    await leaving.worker.close();
    await expect.poll(() => workerRow(leaving.nodeName).getAttribute('data-state'), { timeout: 20_000 }).toBe('offline');
    expect(await workerRow(steady.nodeName).getAttribute('data-state')).toBe('online');
    await screenshot(admin.page, 'operations-worker-offline');
  });

  it('needed nothing from outside this machine and tripped no security policy', () => {
    expect(admin.requests.some((url) => url.endsWith('/api/admin/operations/data'))).toBe(true);
    expect(externalRequests(admin, app.url)).toEqual([]);
    expect(admin.cspViolations).toEqual([]);
    expect(admin.pageErrors).toEqual([]);
  });
});
