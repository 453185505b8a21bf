/**
 * Collecting the installer's answers. For each setting, in the table's order: the flag, else the
 * environment variable, else (interactive) the question with the default shown, else the default
 * (the previous installation's answer or the built-in one). A setting without a default that is
 * still unanswered in a non-interactive run is reported, all of them at once.
 */
import { X509Certificate, createPrivateKey, createPublicKey } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { weakPasswordError } from '../auth/password-strength.js';
import type { InstallConfig } from '../installation/install-config.js';
import { CURRENT_CONFIG_VERSION } from '../installation/install-config.js';
import { OPTIONS, optionProblem, type AnswerKey, type Answers, type AnyOptionSpec, type DefaultContext } from './options.js';
import type { Prompter } from './prompter.js';
import { defaultApiProcesses } from '../config/api-processes.js';

/** Values of settings that do not apply (e.g. HTTPS options of a local install). */
const INACTIVE: Partial<Answers> = { https: 'none', acmeEmail: '', tlsCertFile: '', tlsKeyFile: '' };

export class MissingAnswersError extends Error {
  constructor(readonly missing: AnyOptionSpec[]) {
    super(`missing required settings:\n${missing.map((o) => `  ${o.flag} (or ${o.env}): ${o.help}`).join('\n')}`);
  }
}

export class InvalidAnswersError extends Error {
  constructor(readonly problems: string[]) {
    super(`invalid settings:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
  }
}

function certificateFileProblem(path: string): string | undefined {
  if (!existsSync(path)) return `${path} does not exist`;
  try {
    new X509Certificate(readFileSync(path));
    return undefined;
  } catch {
    return `${path} holds no PEM certificate`;
  }
}

function keyFileProblem(path: string, certFile: string | undefined): string | undefined {
  if (!existsSync(path)) return `${path} does not exist`;
  try {
    const key = createPrivateKey(readFileSync(path));
    if (certFile && existsSync(certFile)) {
      const fromCert = new X509Certificate(readFileSync(certFile)).publicKey.export({ type: 'spki', format: 'der' });
      if (!createPublicKey(key).export({ type: 'spki', format: 'der' }).equals(fromCert)) return `${path} is not the key of ${certFile}`;
    }
    return undefined;
  } catch {
    return `${path} holds no PEM private key`;
  }
}

/** The option's own validator plus checks that need the file system. */
export function validateAnswer(spec: AnyOptionSpec, value: Answers[AnswerKey], answers: Partial<Answers>): string | undefined {
  const own = optionProblem(spec, value, answers);
  if (own) return own;
  if (spec.key === 'tlsCertFile') return certificateFileProblem(String(value));
  if (spec.key === 'tlsKeyFile') return keyFileProblem(String(value), answers.tlsCertFile);
  return undefined;
}

function show(value: Answers[AnswerKey] | undefined): string | undefined {
  if (value === undefined) return undefined;
  return Array.isArray(value) ? value.join(',') : String(value);
}

export interface CollectOptions {
  /** Flag values first, then environment values (flags win). */
  given: Partial<Answers>;
  previous: Partial<InstallConfig> | undefined;
  detectedRuntime: 'compose' | 'local';
  /** Absent: non-interactive (defaults are taken, missing required values fail). */
  prompter?: Prompter;
  /**
   * Non-interactive only: take built-in defaults (--yes). When false, every setting must be
   * given (flag, environment) or come from the previous installation.
   */
  acceptDefaults?: boolean;
  warn: (text: string) => void;
}

async function ask(
  spec: AnyOptionSpec,
  defaultValue: Answers[AnswerKey] | undefined,
  answers: Partial<Answers>,
  prompter: Prompter,
): Promise<Answers[AnswerKey]> {
  const question = spec.question as string;
  if (spec.kind === 'boolean') return prompter.yesNo(question, (defaultValue as boolean | undefined) ?? false);
  if (spec.kind === 'choice') {
    const choices = (spec.choicesFor?.(answers) ?? spec.choices ?? []).map((c) => ({ value: c, name: c }));
    return (await prompter.choose(question, choices, show(defaultValue))) as Answers[AnswerKey];
  }
  const text = await prompter.text(question, show(defaultValue), (raw) => {
    const parsed = parseAnswerText(spec, raw);
    if (typeof parsed === 'object' && parsed !== null && 'error' in parsed) return parsed.error;
    if (parsed === '' && spec.key !== 'publicHost') return 'an answer is required';
    return validateAnswer(spec, parsed, answers);
  });
  return parseAnswerText(spec, text) as Answers[AnswerKey];
}

function parseAnswerText(spec: AnyOptionSpec, raw: string): Answers[AnswerKey] | { error: string } {
  const value = raw.trim();
  if (spec.kind === 'integer') return /^\d+$/.test(value) ? Number(value) : { error: 'enter a whole number' };
  if (spec.kind === 'list')
    return value
      .split(',')
      .map((s) => s.trim())
      .filter((s) => s !== '');
  if (spec.key === 'tlsCertFile' || spec.key === 'tlsKeyFile') return value === '' ? '' : resolve(value);
  return value;
}

export async function collectAnswers(opts: CollectOptions): Promise<Omit<Answers, 'dir'>> {
  const answers: Partial<Answers> = {};
  const missing: AnyOptionSpec[] = [];
  const problems: string[] = [];
  for (const spec of OPTIONS) {
    const key = spec.key;
    const record = answers as Record<AnswerKey, unknown>;
    if (spec.when && !spec.when(answers)) {
      if (key in INACTIVE) record[key] = INACTIVE[key];
      continue;
    }
    const ctx: DefaultContext = { answers, previous: opts.previous, detectedRuntime: opts.detectedRuntime };
    let given = opts.given[key];
    if ((key === 'tlsCertFile' || key === 'tlsKeyFile') && typeof given === 'string') given = resolve(given);
    if (given !== undefined) {
      const problem = validateAnswer(spec, given, answers);
      if (problem) problems.push(`${spec.flag}: ${problem}`);
      record[key] = given;
      continue;
    }
    const defaultValue = spec.defaultValue(ctx);
    if (opts.prompter && spec.question) {
      record[key] = await ask(spec, defaultValue, answers, opts.prompter);
    } else if (defaultValue === undefined || (!opts.prompter && opts.acceptDefaults === false && opts.previous === undefined)) {
      missing.push(spec);
    } else {
      record[key] = defaultValue;
    }
  }
  if ((answers.publicHost ?? '') !== '' && answers.runtime === 'local' && answers.https === 'none') {
    opts.warn(
      `the local runtime will serve ${answers.publicHost} over plain HTTP on every interface: put an HTTPS reverse proxy in front, or install with --https files`,
    );
  }
  if (answers.debug === true && (answers.publicHost ?? '') !== '') {
    opts.warn('DEBUG is on for a public host: internal error details will be shown to anyone. Turn it off for production (--debug=false).');
  }
  if (missing.length > 0) throw new MissingAnswersError(missing);
  if (problems.length > 0) throw new InvalidAnswersError(problems);
  return answers as Omit<Answers, 'dir'>;
}

export function toInstallConfig(a: Omit<Answers, 'dir'>): InstallConfig {
  return {
    configVersion: CURRENT_CONFIG_VERSION,
    runtime: a.runtime,
    admin: { username: a.adminUsername, email: a.adminEmail },
    publicHost: a.publicHost,
    https: a.publicHost === '' ? 'none' : a.https,
    acmeEmail: a.acmeEmail,
    tlsCertFile: a.tlsCertFile,
    tlsKeyFile: a.tlsKeyFile,
    allowedHosts: a.allowedHosts,
    debug: a.debug,
    certValidityDays: a.certValidityDays,
    dataStoreAnonymous: a.dataStoreAnonymous,
    catalogAnonymous: a.catalogAnonymous,
    ports: { http: a.httpPort, https: a.httpsPort, broker: a.brokerPort, database: a.dbPort },
    dbEngine: a.dbEngine,
    certRenewal: a.certRenewal,
    // Both written only when not the default, so a default install.json stays the same as
    // before they existed, and the previous version can still read it (its schema is strict),
    // e.g. after a failed upgrade that left the old installation in place.
    ...(a.apiProcesses !== defaultApiProcesses() ? { apiProcesses: a.apiProcesses } : {}),
    ...(a.topology === 'cluster' ? { topology: a.topology } : {}),
  };
}

/** Asks for the administrator's password twice, strength-checked; empty = generate (or keep). */
export async function askAdminPassword(prompter: Prompter, username: string, emptyMeans: 'generate' | 'keep'): Promise<string | undefined> {
  for (;;) {
    const first = await prompter.secret(
      `Administrator password (empty = ${emptyMeans === 'keep' ? 'keep the current one' : 'generate one'})`,
      (value) => (value === '' ? undefined : (weakPasswordError(value, username)?.message ?? undefined)),
    );
    if (first === '') return undefined;
    const second = await prompter.secret('Repeat the password', () => undefined);
    if (second === first) return first;
    process.stdout.write('The passwords differ; enter them again.\n');
  }
}

export function adminPasswordProblem(password: string, username: string): string | undefined {
  return weakPasswordError(password, username)?.message;
}
