import { describe, expect, it } from 'vitest';
import { collectAnswers, InvalidAnswersError, MissingAnswersError, toInstallConfig } from '../../../src/installer/answers.js';
import type { Prompter } from '../../../src/installer/prompter.js';

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
    const config = toInstallConfig(await collectAnswers({ ...base, given: { publicHost: 'Data.Example.org', runtime: 'compose' }, acceptDefaults: true }));
    expect(config.allowedHosts).toEqual(['data.example.org', 'localhost', '127.0.0.1', '[::1]']);
    expect(config.admin.email).toBe('admin@Data.Example.org');
    expect(config.https).toBe('acme');
    expect(config.acmeEmail).toBe('admin@Data.Example.org');
  });

  it('lists required values that are missing (certificate files for --https files)', async () => {
    const error = await collectAnswers({ ...base, given: { publicHost: 'data.example.org', runtime: 'compose', https: 'files' }, acceptDefaults: true }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(MissingAnswersError);
    expect((error as MissingAnswersError).missing.map((o) => o.flag)).toEqual(['--tls-cert-file', '--tls-key-file']);
  });

  it('local runtime with a public host: HTTPS from the operator\'s files by default; acme refused; none warned about', async () => {
    const error = await collectAnswers({ ...base, given: { publicHost: 'data.example.org', runtime: 'local' }, acceptDefaults: true }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(MissingAnswersError);
    expect((error as MissingAnswersError).missing.map((o) => o.flag)).toEqual(['--tls-cert-file', '--tls-key-file']);

    const acme = await collectAnswers({ ...base, given: { publicHost: 'data.example.org', runtime: 'local', https: 'acme' }, acceptDefaults: true }).catch((e: unknown) => e);
    expect(acme).toBeInstanceOf(InvalidAnswersError);
    expect((acme as InvalidAnswersError).problems.join()).toContain('acme needs the proxy of the compose runtime');

    warnings.length = 0;
    const plain = toInstallConfig(await collectAnswers({ ...base, given: { publicHost: 'data.example.org', runtime: 'local', https: 'none' }, acceptDefaults: true }));
    expect(plain.https).toBe('none');
    expect(warnings.join()).toContain('over plain HTTP on every interface');
  });

  it('compose with a public host is always HTTPS', async () => {
    const error = await collectAnswers({ ...base, given: { publicHost: 'data.example.org', runtime: 'compose', https: 'none' }, acceptDefaults: true }).catch((e: unknown) => e);
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
    const error = await collectAnswers({ ...base, given: { adminEmail: 'nobody', publicHost: 'bad host', runtime: 'compose', certValidityDays: 0 }, acceptDefaults: true }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InvalidAnswersError);
    expect((error as InvalidAnswersError).problems).toHaveLength(3);
    warnings.length = 0;
    await collectAnswers({ ...base, given: { publicHost: 'data.example.org', runtime: 'compose', debug: true }, acceptDefaults: true });
    expect(warnings.join()).toContain('DEBUG is on for a public host');
  });

  it('uses the previous installation\'s answers as defaults (upgrade)', async () => {
    const previous = toInstallConfig(await collectAnswers({ ...base, given: { adminUsername: 'boss', httpPort: 8088, certValidityDays: 30 }, acceptDefaults: true }));
    const again = toInstallConfig(await collectAnswers({ ...base, previous, given: {}, acceptDefaults: true }));
    expect(again).toEqual(previous);
  });

  it('asks through the prompter, which validates (re-asking is the prompt\'s job)', async () => {
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
