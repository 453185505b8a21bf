/**
 * Runs every ```sh example block of the manual (README.md, then docs/ in path order) with bash
 * against the real server, so the documented curl lines are known to work. Each block must exit
 * 0 (curl -f fails on HTTP errors) and print only JSON documents.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startTestApp, type TestApp } from '../../support/app.js';
import type { Worker } from '../../../src/worker/worker.js';
import { until } from '../../support/until.js';
import { startWorker } from '../queue/support.js';
import { shellExamples } from '../../support/doc-examples.js';

const run = promisify(execFile);
const blocks = shellExamples();

/** Splits concatenated JSON documents (several curl calls print back to back). */
function jsonDocuments(text: string): unknown[] {
  const docs: unknown[] = [];
  let rest = text.trim();
  while (rest.length > 0) {
    let parsed = false;
    for (let end = 1; end <= rest.length; end++) {
      const ch = rest[end - 1];
      if (ch !== '}' && ch !== ']') continue;
      try {
        docs.push(JSON.parse(rest.slice(0, end)));
        rest = rest.slice(end).trim();
        parsed = true;
        break;
      } catch {
        // not yet a complete document
      }
    }
    if (!parsed) throw new Error(`not JSON: ${rest.slice(0, 200)}`);
  }
  return docs;
}

let app: TestApp;
let env: Record<string, string>;
let worker: Worker;
const scratch = mkdtempSync(join(tmpdir(), 'doc-examples-'));

beforeAll(async () => {
  app = await startTestApp();
  await app.users.createUser({ username: 'researcher', password: 'readme-password-1', isSuperuser: true });
  const started = await startWorker(app.ctx.settings.serviceDatabase);
  worker = started.worker;
  const token = await app.users.tokenFor('researcher');
  env = {
    ...process.env,
    API: app.url,
    TOKEN: token,
    USERNAME: 'researcher',
    PASSWORD: 'readme-password-1',
    QUEUE: started.queue,
  } as Record<string, string>;
  await until(
    async () => (await call(app.url, 'GET', '/api/queue/?refresh=true', { token })).json?.queues?.includes(started.queue) === true,
    20_000,
    'the worker',
  );
});

afterAll(async () => {
  rmSync(scratch, { recursive: true, force: true });
  await worker?.close();
  await app?.close();
});

describe('the manual\'s shell examples', () => {
  it('has examples to run, the README\'s among them', () => {
    expect(blocks.length).toBeGreaterThanOrEqual(5);
    expect(blocks.some((block) => block.file === 'README.md')).toBe(true);
  });

  // Sequential on purpose: later examples use what earlier ones created.
  it('runs every example successfully, in order', async () => {
    const outputs: unknown[][] = [];
    for (const block of blocks) {
      const where = `${block.file}:${block.line}`;
      // In a scratch directory: examples may write files (an export).
      const { stdout } = await run('bash', ['-euo', 'pipefail', '-c', block.code], { env, cwd: scratch }).catch((error: unknown) => {
        throw new Error(`${where} failed: ${String(error)}`);
      });
      const docs = jsonDocuments(stdout);
      expect(docs.length, where).toBeGreaterThan(0);
      outputs.push(docs);
    }
    const all = outputs.flat() as Record<string, any>[];
    // The README's: health, then the databases the caller may read.
    expect(all[0]).toMatchObject({ status: 'ok' });
    expect(all[1]).toHaveProperty('results');
    const query = all.find((d) => d.meta?.page_size === 2);
    expect(query?.results).toEqual([
      { name: 'Boise City', elev: 1265 },
      { name: 'Norman', elev: 357, installed: '2001-04-01T00:00:00.000Z' },
    ]);
    expect(query?.count).toBe(2);
    expect(all.find((d) => Array.isArray(d.results) && d.results[0]?.total_elev !== undefined)?.results).toEqual([
      { _id: null, total_elev: 1622 },
    ]);
    expect(all.some((d) => d.access !== undefined && d.refresh !== undefined)).toBe(true);
    expect(all.some((d) => d.status === 'PENDING' && typeof d.result_url === 'string')).toBe(true);
    expect(all.some((d) => d.status === 'SUCCESS' && d.result === 42)).toBe(true);
    const history = all.find((d) => Array.isArray(d.results) && d.results[0]?.task_name === 'tasks.add');
    expect(history?.results.map((r: { tags: string[] }) => r.tags)).toEqual([['demo']]);
    expect(readFileSync(join(scratch, 'stations.csv'), 'utf8')).toMatch(/^name,elev\r\nBoise City,1265\r\n/);
    const link = all.find((d) => typeof d.url === 'string' && typeof d.expires === 'string');
    expect((await fetch(link?.url as string)).status).toBe(200);
    expect(all).toContainEqual({ name: 'elev_-1' });
    // The schedules page's: a nightly schedule at 02:00 Chicago time, previewed, run, paused, deleted.
    const preview = all.find((d) => Array.isArray(d.next_fire_times));
    expect(preview?.next_fire_times).toHaveLength(3);
    for (const t of preview?.next_fire_times as string[]) {
      expect(new Date(t).toLocaleTimeString('en-US', { timeZone: 'America/Chicago', hour12: false })).toBe('02:00:00');
    }
    expect(all.some((d) => d.name === 'nightly-summary' && d.paused === true && d.note === 'sensor maintenance')).toBe(true);
    expect(all.some((d) => d.status === 'PENDING' && d.run?.kind === 'manual')).toBe(true);
    expect(all).toContainEqual({ deleted: 204 });
  });
});
