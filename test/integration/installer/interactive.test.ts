/**
 * The interactive installer in a real pseudo-terminal (tmux): every question shows its default,
 * invalid answers are explained and asked again, the password is entered twice, and the answers
 * end up in install.json. --no-start keeps this test to configuration and certificates.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { until } from '../../support/until.js';
import { prepareInstall, REPO, type TestInstall } from './support.js';

const execFileAsync = promisify(execFile);
const socket = `cybercom-test-${process.pid}`;
const session = 'installer';
let target: TestInstall;

async function tmux(...args: string[]): Promise<string> {
  const { stdout } = await execFileAsync('tmux', ['-L', socket, ...args]);
  return stdout;
}

async function screen(): Promise<string> {
  return tmux('capture-pane', '-p', '-J', '-S', '-200', '-t', session);
}

/**
 * Waits until the screen shows `text`. Questions are awaited as "? <question>": inquirer marks
 * the open question with "?" and answered ones with a check mark, so this never matches an
 * earlier, already answered question.
 */
async function waitFor(text: string, timeoutMs = 30_000): Promise<string> {
  let content = '';
  return until(
    async () => {
      content = await screen();
      return content.includes(text) ? content : undefined;
    },
    timeoutMs,
    () => `${text}; screen:\n${content}`,
    150,
  );
}

async function type(text: string): Promise<void> {
  if (text !== '') await tmux('send-keys', '-t', session, '-l', text);
  await tmux('send-keys', '-t', session, 'Enter');
}

async function clearLine(): Promise<void> {
  await tmux('send-keys', '-t', session, 'C-u');
}

beforeAll(async () => {
  target = await prepareInstall('interactive');
  const command = [
    `cd ${REPO}`,
    `./installer --no-start --runtime local --http-port ${target.ports.http} --broker-port ${target.ports.broker} --db-port ${target.ports.db}`,
    'echo "INSTALLER-EXIT=$?"',
    'sleep 600',
  ].join('; ');
  await execFileAsync('tmux', ['-L', socket, 'new-session', '-d', '-s', session, '-x', '200', '-y', '60', `bash -c '${command}'`]);
}, 30_000);

afterAll(async () => {
  await tmux('kill-server').catch(() => undefined);
  await target?.cleanup();
});

describe('interactive installer (tmux)', () => {
  it('asks every question with its default, re-asks invalid answers, and writes the answers', async () => {
    await waitFor('? Install directory');
    await clearLine();
    await type(target.dir);

    const user = await waitFor('? Administrator username');
    expect(user).toContain('(admin)');
    await type('not a user!');
    await waitFor('letters, digits and @ . + - _');
    await clearLine();
    await type('operator');

    await waitFor('? Public host name or domain');
    await type('bad host!');
    await waitFor('is not a valid host name');
    await clearLine();
    await type('');

    const email = await waitFor('? Administrator e-mail');
    expect(email).toContain('admin@localhost.localdomain');
    await clearLine();
    await type('not-an-email');
    await waitFor('is not a valid e-mail address');
    await clearLine();
    await type('ops@example.org');

    const hosts = await waitFor('? ALLOWED_HOSTS');
    expect(hosts).toContain('localhost,127.0.0.1,[::1]');
    await type('');

    await waitFor('? Turn DEBUG on?');
    await type('');

    const days = await waitFor('? Certificate validity in days');
    expect(days).toContain('365');
    await clearLine();
    await type('soon');
    await waitFor('enter a whole number');
    await clearLine();
    await type('90');

    await waitFor('? Allow anonymous reads of the data store?');
    await type('y');
    await waitFor('? Allow anonymous reads of the catalog?');
    await type('');

    await waitFor('? Administrator password (empty = generate one)');
    await type('12345');
    await waitFor('The password is too weak');
    await clearLine();
    await type('Tmux-Strong-Pass-1');
    await waitFor('? Repeat the password');
    await type('Something-Else-2');
    await waitFor('The passwords differ');
    await waitFor('? Administrator password (empty = generate one)');
    await type('Tmux-Strong-Pass-1');
    await waitFor('? Repeat the password');
    await type('Tmux-Strong-Pass-1');

    await waitFor('? Proceed?');
    await type('');
    const end = await waitFor('INSTALLER-EXIT=', 120_000);
    expect(end, end).toContain('INSTALLER-EXIT=0');
    expect(end).toMatch(/Certificates: issued 6/);
    expect(end).toContain('Start services: skipped (--no-start)');
    expect(end).not.toContain('Tmux-Strong-Pass-1');

    const config = JSON.parse(await readFile(join(target.dir, 'config', 'install.json'), 'utf8'));
    expect(config).toMatchObject({
      runtime: 'local',
      admin: { username: 'operator', email: 'ops@example.org' },
      publicHost: '',
      allowedHosts: ['localhost', '127.0.0.1', '[::1]'],
      debug: false,
      certValidityDays: 90,
      dataStoreAnonymous: true,
      catalogAnonymous: false,
      ports: { http: target.ports.http, broker: target.ports.broker, database: target.ports.db },
    });
    expect(existsSync(join(target.dir, 'certs', 'worker.key'))).toBe(true);
  }, 180_000);
});
