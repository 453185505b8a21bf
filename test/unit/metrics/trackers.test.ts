import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CertificateExpiries, daysLeft } from '../../../src/metrics/certificate-collector.js';
import { allowListEntryProblem, ipAllowList } from '../../../src/config/ip-allowlist.js';
import { OTHER } from '../../../src/metrics/labels.js';
import { BatchedCounter } from '../../../src/metrics/registry.js';
import { TaskOutcomes } from '../../../src/metrics/task-outcomes.js';
import { createCertificateAuthority } from '../../../src/pki/certificates.js';

describe('batched counter', () => {
  it('hands its increments to the counter when read, each once, and keeps label sets apart', async () => {
    const registry = new Registry();
    const batched = new BatchedCounter({ name: 't_batched', help: 'h', labelNames: ['a', 'b'], registers: [registry] });
    batched.inc({ a: 'x', b: 'y' });
    batched.inc({ a: 'x', b: 'y' }, 2);
    batched.inc({ a: 'x\u0000', b: '' });
    batched.inc({ a: 'x', b: '\u0000' });
    const read = async () => (await registry.getMetricsAsJSON())[0]?.values.map((v) => [v.labels.a, v.labels.b, v.value]);
    expect(await read()).toEqual(
      expect.arrayContaining([
        ['x', 'y', 3],
        ['x\u0000', '', 1],
        ['x', '\u0000', 1],
      ]),
    );
    batched.inc({ a: 'x', b: 'y' });
    expect(await read()).toEqual(expect.arrayContaining([['x', 'y', 4]]));
    expect(await read()).toEqual(expect.arrayContaining([['x', 'y', 4]]));
    expect(await registry.metrics()).toContain('t_batched{a="x",b="y"} 4');
  });
});

describe('task outcomes from task events', () => {
  it('names later events after task-received and counts unknown ids under OTHER', async () => {
    const counter = new BatchedCounter({ name: 't_tasks', help: 'h', labelNames: ['task', 'state'], registers: [new Registry()] });
    const outcomes = new TaskOutcomes(counter, (name) => (name === 'tasks.add' ? name : OTHER));
    outcomes.observe({ type: 'task-received', uuid: 'a', name: 'tasks.add' });
    outcomes.observe({ type: 'task-started', uuid: 'a' });
    outcomes.observe({ type: 'task-succeeded', uuid: 'a' });
    outcomes.observe({ type: 'task-received', uuid: 'b', name: 'secret.unregistered' });
    outcomes.observe({ type: 'task-failed', uuid: 'b' });
    outcomes.observe({ type: 'task-failed', uuid: 'never-received' });
    outcomes.observe({ type: 'task-succeeded', uuid: 'a' }); // after its end: name forgotten
    const values = (await counter.counter.get()).values.map((v) => [v.labels.task, v.labels.state, v.value]);
    expect(values).toEqual(
      expect.arrayContaining([
        ['tasks.add', 'RECEIVED', 1],
        ['tasks.add', 'STARTED', 1],
        ['tasks.add', 'SUCCESS', 1],
        [OTHER, 'RECEIVED', 1],
        [OTHER, 'FAILURE', 2],
        [OTHER, 'SUCCESS', 1],
      ]),
    );
  });
});

describe('METRICS_ALLOWED_IPS', () => {
  it('matches addresses and CIDR blocks, IPv4 also when mapped into IPv6', () => {
    const list = ipAllowList(['127.0.0.1', '10.1.0.0/16', 'fd00::/8']);
    expect(list.allows('127.0.0.1')).toBe(true);
    expect(list.allows('::ffff:127.0.0.1')).toBe(true);
    expect(list.allows('10.1.200.3')).toBe(true);
    expect(list.allows('10.2.0.1')).toBe(false);
    expect(list.allows('fd12::1')).toBe(true);
    expect(list.allows('::1')).toBe(false);
    expect(list.allows(undefined)).toBe(false);
    expect(ipAllowList([]).allows('127.0.0.1')).toBe(false);
  });

  it.each(['localhost', '10.0.0.0/33', '10.0.0.1/8/1', 'fd00::/129', '1.2.3.4/x'])('refuses %s', (entry) => {
    expect(allowListEntryProblem(entry)).not.toBeNull();
  });
});

describe('certificate days left', () => {
  it('reports the earliest expiry of the certificates in a file', async () => {
    const ca = await createCertificateAuthority({ validityDays: 30, keyBits: 1024 });
    const days = daysLeft(`${ca.keyPem}\n${ca.certPem}`);
    expect(days).toBeGreaterThan(29);
    expect(days).toBeLessThanOrEqual(30.01);
    expect(daysLeft('no certificate here')).toBeNull();
  });

  it('parses a file once, and again after it is rewritten or replaced (a rotation shows at the next scrape)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'cert-expiries-'));
    try {
      const file = join(dir, 'server.pem');
      const short = await createCertificateAuthority({ validityDays: 10, keyBits: 1024 });
      const long = await createCertificateAuthority({ validityDays: 400, keyBits: 1024 });
      writeFileSync(file, short.certPem);
      const expiries = new CertificateExpiries();
      const first = expiries.of(file);
      expect(first).not.toBeNull();
      expect(((first as number) - Date.now()) / 86_400_000).toBeCloseTo(10, 0);
      expect(expiries.of(file)).toBe(first);

      // Replaced by rename, as rotation tools do: a new inode.
      writeFileSync(join(dir, 'next.pem'), long.certPem);
      renameSync(join(dir, 'next.pem'), file);
      const rotated = expiries.of(file);
      expect(((rotated as number) - Date.now()) / 86_400_000).toBeCloseTo(400, 0);

      // Rewritten in place with other content.
      writeFileSync(file, 'no certificate here');
      expect(expiries.of(file)).toBeNull();
      rmSync(file);
      expect(() => expiries.of(file)).toThrow();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
