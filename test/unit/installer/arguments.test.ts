import { describe, expect, it } from 'vitest';
import { parseInstallerArguments, UsageError, valuesFromEnvironment } from '../../../src/installer/arguments.js';
import { installerHelp } from '../../../src/installer/main.js';
import { OPTIONS } from '../../../src/installer/options.js';

describe('installer arguments', () => {
  it('parses values in both forms, booleans with --flag, --no-flag and --flag=value', () => {
    const args = parseInstallerArguments([
      '--yes',
      '--dir',
      '/srv/c',
      '--http-port=8081',
      '--debug',
      '--no-catalog-anonymous',
      '--data-store-anonymous=false',
      '--allowed-hosts',
      'a.org, b.org',
    ]);
    expect(args.yes).toBe(true);
    expect(args.dir).toBe('/srv/c');
    expect(args.values).toEqual({
      httpPort: 8081,
      debug: true,
      catalogAnonymous: false,
      dataStoreAnonymous: false,
      allowedHosts: ['a.org', 'b.org'],
    });
  });

  it('collects every problem at once', () => {
    try {
      parseInstallerArguments(['--http-port', 'eighty', '--runtime', 'kubernetes', '--bogus', '--admin-password', 'x', '--cert-days']);
      expect.unreachable();
    } catch (err) {
      expect(err).toBeInstanceOf(UsageError);
      const problems = (err as UsageError).problems.join('\n');
      expect(problems).toContain('--http-port: "eighty" is not a whole number');
      expect(problems).toContain('--runtime: "kubernetes" is not one of compose, local');
      expect(problems).toContain('unknown option "--bogus"');
      expect(problems).toContain('process list');
      expect(problems).toContain('--cert-days needs a value');
    }
  });

  it('reads CYBERCOM_* variables with the same parsing', () => {
    expect(
      valuesFromEnvironment({ CYBERCOM_PUBLIC_HOST: 'data.example.org', CYBERCOM_DEBUG: 'no', CYBERCOM_BROKER_PORT: '5672' }).values,
    ).toEqual({ publicHost: 'data.example.org', debug: false, brokerPort: 5672 });
    expect(valuesFromEnvironment({ CYBERCOM_DEBUG: 'maybe' }).problems).toEqual(['CYBERCOM_DEBUG: "maybe" is not true or false']);
  });

  it('documents every flag and its environment variable in --help', () => {
    const help = installerHelp();
    for (const option of OPTIONS) {
      expect(help).toContain(option.flag);
      expect(help).toContain(option.env);
    }
    for (const flag of ['--yes', '--non-interactive', '--force-certs', '--no-start', '--dir', '--admin-password-file'])
      expect(help).toContain(flag);
  });
});
