import { defaultApiProcesses } from '../../../src/config/api-processes.js';
import { describe, expect, it } from 'vitest';
import { collectAnswers, InvalidAnswersError, MissingAnswersError, toInstallConfig } from '../../../src/installer/answers.js';
import { parseInstallerArguments, UsageError, valuesFromEnvironment } from '../../../src/installer/arguments.js';
import type { Prompter } from '../../../src/installer/prompter.js';
import { apiProcessesOf } from '../../../src/installation/install-config.js';

const warnings: string[] = [];
const base = { detectedRuntime: 'local' as const, previous: undefined, warn: (t: string) => warnings.push(t) };

describe('collecting answers', () => {
  it('takes the defaults with --yes: a local install over plain HTTP', async () => {
    const config = toInstallConfig(await collectAnswers({ ...base, given: {}, acceptDefaults: true }));
    expect(config).toMatchObject({
      runtime: 'local',
      admin: { username: 'admin', email: 'admin@localhost.localdomain' },
      publicHost: '',
      https: 'none',
      allowedHosts: ['localhost', '127.0.0.1', '[::1]'],
      debug: false,
      certValidityDays: 365,
      dataStoreAnonymous: false,
      catalogAnonymous: false,
      ports: { http: 80, https: 443, broker: 5671, database: 27017 },
    });
  });

  it('derives ALLOWED_HOSTS and the e-mail from the public host, and ACME by default for compose', async () => {
    const config = toInstallConfig(
      await collectAnswers({ ...base, given: { publicHost: 'Data.Example.org', runtime: 'compose' }, acceptDefaults: true }),
    );
    expect(config.allowedHosts).toEqual(['data.example.org', 'localhost', '127.0.0.1', '[::1]']);
    expect(config.admin.email).toBe('admin@Data.Example.org');
    expect(config.https).toBe('acme');
    expect(config.acmeEmail).toBe('admin@Data.Example.org');
  });

  it('lists required values that are missing (certificate files for --https files)', async () => {
    const error = await collectAnswers({
      ...base,
      given: { publicHost: 'data.example.org', runtime: 'compose', https: 'files' },
      acceptDefaults: true,
    }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(MissingAnswersError);
    expect((error as MissingAnswersError).missing.map((o) => o.flag)).toEqual(['--tls-cert-file', '--tls-key-file']);
  });

  it("local runtime with a public host: HTTPS from the operator's files by default; acme refused; none warned about", async () => {
    const error = await collectAnswers({
      ...base,
      given: { publicHost: 'data.example.org', runtime: 'local' },
      acceptDefaults: true,
    }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(MissingAnswersError);
    expect((error as MissingAnswersError).missing.map((o) => o.flag)).toEqual(['--tls-cert-file', '--tls-key-file']);

    const acme = await collectAnswers({
      ...base,
      given: { publicHost: 'data.example.org', runtime: 'local', https: 'acme' },
      acceptDefaults: true,
    }).catch((e: unknown) => e);
    expect(acme).toBeInstanceOf(InvalidAnswersError);
    expect((acme as InvalidAnswersError).problems.join()).toContain('acme needs the proxy of the compose runtime');

    warnings.length = 0;
    const plain = toInstallConfig(
      await collectAnswers({ ...base, given: { publicHost: 'data.example.org', runtime: 'local', https: 'none' }, acceptDefaults: true }),
    );
    expect(plain.https).toBe('none');
    expect(warnings.join()).toContain('over plain HTTP on every interface');
  });

  it('compose with a public host is always HTTPS', async () => {
    const error = await collectAnswers({
      ...base,
      given: { publicHost: 'data.example.org', runtime: 'compose', https: 'none' },
      acceptDefaults: true,
    }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InvalidAnswersError);
    expect((error as InvalidAnswersError).problems.join()).toContain('acme or files');
  });

  it('offers only the HTTPS modes of the chosen runtime when asking', async () => {
    const offered: string[][] = [];
    const prompter: Prompter = {
      text: async (_q, d) => d ?? '',
      yesNo: async (_q, d) => d,
      choose: async (question, choices, d) => {
        if (question === 'HTTPS certificates') offered.push(choices.map((c) => c.value));
        return question === 'HTTPS certificates' ? 'none' : (d ?? '');
      },
      secret: async () => '',
    };
    await collectAnswers({ ...base, given: { runtime: 'local', publicHost: 'data.example.org' }, prompter });
    expect(offered).toEqual([['files', 'none']]);
  });

  it('without --yes a non-interactive run needs every setting', async () => {
    const error = await collectAnswers({ ...base, given: { runtime: 'local' }, acceptDefaults: false }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(MissingAnswersError);
    expect((error as MissingAnswersError).message).toContain('--admin-username');
  });

  it('refuses invalid given values and warns about DEBUG on a public host', async () => {
    const error = await collectAnswers({
      ...base,
      given: { adminEmail: 'nobody', publicHost: 'bad host', runtime: 'compose', certValidityDays: 0 },
      acceptDefaults: true,
    }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InvalidAnswersError);
    expect((error as InvalidAnswersError).problems).toHaveLength(3);
    warnings.length = 0;
    await collectAnswers({ ...base, given: { publicHost: 'data.example.org', runtime: 'compose', debug: true }, acceptDefaults: true });
    expect(warnings.join()).toContain('DEBUG is on for a public host');
  });

  it("uses the previous installation's answers as defaults (upgrade)", async () => {
    const previous = toInstallConfig(
      await collectAnswers({ ...base, given: { adminUsername: 'boss', httpPort: 8088, certValidityDays: 30 }, acceptDefaults: true }),
    );
    const again = toInstallConfig(await collectAnswers({ ...base, previous, given: {}, acceptDefaults: true }));
    expect(again).toEqual(previous);
  });

  it("asks through the prompter, which validates (re-asking is the prompt's job)", async () => {
    const asked: string[] = [];
    const rejected: string[] = [];
    const prompter: Prompter = {
      async text(question, defaultValue, validate) {
        asked.push(`${question} [${defaultValue ?? ''}]`);
        if (question.startsWith('Administrator e-mail')) {
          const problem = validate('not-an-address');
          if (problem) rejected.push(problem);
          return 'ops@example.org';
        }
        return defaultValue ?? '';
      },
      yesNo: async (_q, d) => d,
      choose: async (_q, _c, d) => d ?? '',
      secret: async () => '',
    };
    const answers = await collectAnswers({ ...base, given: { runtime: 'local' }, prompter });
    expect(answers.adminEmail).toBe('ops@example.org');
    expect(rejected).toEqual(['"not-an-address" is not a valid e-mail address']);
    expect(asked).toContain('Administrator username [admin]');
    expect(asked).toContain('Certificate validity in days [365]');
  });
});

describe('--topology', () => {
  it('defaults to a single node, which install.json does not mention (as before the option)', async () => {
    const config = toInstallConfig(await collectAnswers({ ...base, given: { runtime: 'compose' }, acceptDefaults: true }));
    expect(config).not.toHaveProperty('topology');
    expect(
      toInstallConfig(await collectAnswers({ ...base, given: { runtime: 'compose', topology: 'single' }, acceptDefaults: true })),
    ).toEqual(config);
  });

  it('gives the compose runtime a cluster, kept on re-runs', async () => {
    const parsed = parseInstallerArguments(['--topology', 'cluster', '--runtime', 'compose']).values;
    expect(parsed).toEqual({ topology: 'cluster', runtime: 'compose' });
    const config = toInstallConfig(await collectAnswers({ ...base, given: parsed, acceptDefaults: true }));
    expect(config.topology).toBe('cluster');
    const again = toInstallConfig(await collectAnswers({ ...base, previous: config, given: {}, acceptDefaults: true }));
    expect(again.topology).toBe('cluster');
    expect(valuesFromEnvironment({ CYBERCOM_TOPOLOGY: 'cluster' }).values).toEqual({ topology: 'cluster' });
    expect(() => parseInstallerArguments(['--topology', 'sharded'])).toThrow(UsageError);
  });

  it('refuses a cluster for the local runtime, whose database is one node; a local re-run falls back to single', async () => {
    const error = await collectAnswers({ ...base, given: { runtime: 'local', topology: 'cluster' }, acceptDefaults: true }).catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(InvalidAnswersError);
    expect((error as InvalidAnswersError).problems.join()).toContain('--topology cluster needs --runtime compose');
    const previous = toInstallConfig(
      await collectAnswers({ ...base, given: { runtime: 'compose', topology: 'cluster' }, acceptDefaults: true }),
    );
    const local = toInstallConfig(await collectAnswers({ ...base, previous, given: { runtime: 'local' }, acceptDefaults: true }));
    expect(local).not.toHaveProperty('topology');
  });
});

describe('--api-processes', () => {
  it("defaults to the machine's default (then not written, so the previous version still reads install.json), is stored and kept on re-runs", async () => {
    const config = toInstallConfig(await collectAnswers({ ...base, given: {}, acceptDefaults: true }));
    expect(config).not.toHaveProperty('apiProcesses');
    expect(apiProcessesOf(config)).toBe(defaultApiProcesses());
    const given = toInstallConfig(
      await collectAnswers({ ...base, given: parseInstallerArguments(['--api-processes', '3']).values, acceptDefaults: true }),
    );
    expect(given.apiProcesses).toBe(3);
    const again = toInstallConfig(await collectAnswers({ ...base, previous: given, given: {}, acceptDefaults: true }));
    expect(again.apiProcesses).toBe(3);
    expect(valuesFromEnvironment({ CYBERCOM_API_PROCESSES: '4' }).values).toEqual({ apiProcesses: 4 });
  });

  it('refuses 0 and anything that is not a whole number', async () => {
    const error = await collectAnswers({ ...base, given: { apiProcesses: 0 }, acceptDefaults: true }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InvalidAnswersError);
    expect((error as InvalidAnswersError).problems.join()).toContain('--api-processes: a whole number from 1 to 256');
    expect(() => parseInstallerArguments(['--api-processes', 'many'])).toThrow(UsageError);
  });
});
