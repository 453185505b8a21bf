import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseCreateSuperuserArgs, runCreateSuperuser } from '../../../src/auth/cli-createsuperuser.js';

function capture() {
  const out = { stdout: '', stderr: '' };
  return {
    out,
    io: { stdout: { write: (t: string) => (out.stdout += t) }, stderr: { write: (t: string) => (out.stderr += t) } },
  };
}

describe('createsuperuser arguments', () => {
  it('parses both option spellings', () => {
    expect(parseCreateSuperuserArgs(['--username', 'admin', '--email=a@b.co', '--password-env', 'PW'])).toEqual({
      username: 'admin',
      email: 'a@b.co',
      passwordEnv: 'PW',
      help: false,
    });
  });

  it.each([
    [['--username', 'admin', '--email', 'a@b.co', '--password', 'hunter22'], /process list/],
    [['--username', 'admin', '--email', 'a@b.co', '--password=hunter22'], /process list/],
    [['--username', 'admin', '--email', 'a@b.co'], /exactly one of/],
    [['--username', 'admin', '--email', 'a@b.co', '--password-file', 'f', '--password-env', 'V'], /exactly one of/],
    [['--email', 'a@b.co', '--password-env', 'V'], /--username is required/],
    [['--username', 'admin', '--email'], /needs a value/],
    [['--username', 'admin', '--frobnicate'], /Unknown argument/],
  ])('refuses %j', (argv, message) => {
    expect(() => parseCreateSuperuserArgs(argv)).toThrowError(message);
  });
});

describe('runCreateSuperuser before touching the database', () => {
  it('prints help with exit code 0', async () => {
    const { out, io } = capture();
    expect(await runCreateSuperuser(['--help'], {}, io)).toBe(0);
    expect(out.stdout).toMatch(/--password-file FILE/);
  });

  it('refuses a command-line password with exit code 2', async () => {
    const { out, io } = capture();
    expect(await runCreateSuperuser(['--username', 'admin', '--email', 'a@b.co', '--password', 'x'], {}, io)).toBe(2);
    expect(out.stderr).toMatch(/--password-file or --password-env/);
  });

  it('refuses weak passwords and bad e-mail addresses', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'csu-'));
    const file = join(dir, 'pw');
    await writeFile(file, 'password\n');
    const weak = capture();
    expect(await runCreateSuperuser(['--username', 'admin', '--email', 'a@b.co', '--password-file', file], {}, weak.io)).toBe(2);
    expect(weak.out.stderr).toMatch(/too common/);
    const email = capture();
    expect(
      await runCreateSuperuser(
        ['--username', 'admin', '--email', 'not-an-address', '--password-env', 'PW'],
        { PW: 'a-Good-one-2024' },
        email.io,
      ),
    ).toBe(2);
    expect(email.out.stderr).toMatch(/not a valid e-mail/);
  });

  it('reports missing configuration with exit code 78', async () => {
    const { out, io } = capture();
    expect(
      await runCreateSuperuser(['--username', 'admin', '--email', 'a@b.co', '--password-env', 'PW'], { PW: 'a-Good-one-2024' }, io),
    ).toBe(78);
    expect(out.stderr).toMatch(/SECRET_KEY/);
  });
});
