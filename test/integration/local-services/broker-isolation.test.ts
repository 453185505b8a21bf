/**
 * The private RabbitMQ node keeps Erlang distribution to this host: epmd (4369) and the node's
 * distribution port listen on loopback only, and the node has a cookie of its own, so neither
 * another host nor another installation's node on this host can control it.
 */
import { execFile } from 'node:child_process';
import { stat, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { testServices } from '../../support/services.js';

const execFileAsync = promisify(execFile);

/** Listening TCP sockets of Erlang processes (the VM and epmd): local address and port. */
async function erlangListeners(): Promise<Array<{ address: string; port: number }>> {
  const { stdout } = await execFileAsync('ss', ['-Hltnp']);
  return stdout
    .split('\n')
    .filter((line) => /"(beam\.smp|epmd)"/.test(line))
    .map((line) => {
      const local = line.trim().split(/\s+/)[3] ?? '';
      const cut = local.lastIndexOf(':');
      return { address: local.slice(0, cut), port: Number(local.slice(cut + 1)) };
    });
}

describe('the broker node', () => {
  it('listens for Erlang distribution on loopback only; only AMQPS may be wider', async () => {
    const { broker } = testServices();
    const listeners = await erlangListeners();
    expect(
      listeners.some((l) => l.port === 4369),
      JSON.stringify(listeners),
    ).toBe(true);
    const wide = listeners.filter((l) => l.port !== broker.port && !['127.0.0.1', '[::1]'].includes(l.address));
    expect(wide, JSON.stringify(listeners)).toEqual([]);
  });

  it('has an Erlang cookie of its own, readable by its user only', async () => {
    const dir = join(testServices().stateDir, 'rabbitmq');
    const cookie = join(dir, '.erlang.cookie');
    const info = await stat(cookie);
    expect(info.mode & 0o777).toBe(0o400);
    const own = (await readFile(cookie, 'utf8')).trim();
    expect(own).toMatch(/^[0-9a-f]{48}$/);
    const shared = await readFile('/var/lib/rabbitmq/.erlang.cookie', 'utf8').catch(() => '');
    expect(own).not.toBe(shared.trim());
  });
});
