/**
 * Command-line parsing of the installer: the setting flags from the option table plus the flags
 * that steer the run. `--flag value` and `--flag=value`; booleans also as `--flag` / `--no-flag`.
 * Every problem is collected, so one run reports them all.
 */
import { OPTIONS, OptionValueError, parseOptionValue, type AnswerKey, type Answers } from './options.js';

export interface InstallerArguments {
  values: Partial<Answers>;
  dir?: string;
  adminPasswordFile?: string;
  yes: boolean;
  nonInteractive: boolean;
  forceCerts: boolean;
  noStart: boolean;
  help: boolean;
}

export class UsageError extends Error {
  constructor(readonly problems: string[]) {
    super(problems.join('\n'));
  }
}

const RUN_FLAGS: Record<string, keyof Pick<InstallerArguments, 'yes' | 'nonInteractive' | 'forceCerts' | 'noStart' | 'help'>> = {
  '--yes': 'yes',
  '-y': 'yes',
  '--non-interactive': 'nonInteractive',
  '--force-certs': 'forceCerts',
  '--no-start': 'noStart',
  '--help': 'help',
  '-h': 'help',
};

export function parseInstallerArguments(argv: readonly string[]): InstallerArguments {
  const result: InstallerArguments = { values: {}, yes: false, nonInteractive: false, forceCerts: false, noStart: false, help: false };
  const problems: string[] = [];
  const seen = new Set<string>();
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    const eq = arg.indexOf('=');
    const name = arg.startsWith('--') && eq > 0 ? arg.slice(0, eq) : arg;
    const inline = arg.startsWith('--') && eq > 0 ? arg.slice(eq + 1) : undefined;
    const runFlag = RUN_FLAGS[name];
    if (runFlag) {
      result[runFlag] = true;
      continue;
    }
    const next = (): string | undefined => {
      if (inline !== undefined) return inline;
      const value = argv[i + 1];
      if (value === undefined || value.startsWith('--')) return undefined;
      i++;
      return value;
    };
    if (name === '--dir' || name === '--admin-password-file') {
      const value = next();
      if (value === undefined || value === '') problems.push(`${name} needs a value`);
      else if (name === '--dir') result.dir = value;
      else result.adminPasswordFile = value;
      continue;
    }
    if (name === '--admin-password') {
      problems.push(
        '--admin-password would show the password in the process list: use --admin-password-file FILE or CYBERCOM_ADMIN_PASSWORD',
      );
      continue;
    }
    const negated = name.startsWith('--no-') ? OPTIONS.find((o) => o.kind === 'boolean' && o.flag === `--${name.slice(5)}`) : undefined;
    const spec = negated ?? OPTIONS.find((o) => o.flag === name);
    if (!spec) {
      problems.push(`unknown option "${arg}" (see --help)`);
      continue;
    }
    if (seen.has(spec.key)) problems.push(`${spec.flag} given twice`);
    seen.add(spec.key);
    let text: string | undefined;
    if (negated) text = inline ?? 'false';
    else if (spec.kind === 'boolean') text = inline ?? 'true';
    else text = next();
    if (text === undefined) {
      problems.push(`${spec.flag} needs a value`);
      continue;
    }
    try {
      let value = parseOptionValue(spec, text);
      if (negated && typeof value === 'boolean' && inline !== undefined) value = !value;
      (result.values as Record<AnswerKey, unknown>)[spec.key] = value;
    } catch (err) {
      if (!(err instanceof OptionValueError)) throw err;
      problems.push(err.message);
    }
  }
  if (problems.length > 0) throw new UsageError(problems);
  return result;
}

/** Values from CYBERCOM_* environment variables (flags win over them). */
export function valuesFromEnvironment(env: NodeJS.ProcessEnv): { values: Partial<Answers>; problems: string[] } {
  const values: Partial<Answers> = {};
  const problems: string[] = [];
  for (const spec of OPTIONS) {
    const text = env[spec.env];
    if (text === undefined) continue;
    try {
      (values as Record<AnswerKey, unknown>)[spec.key] = parseOptionValue(spec, text);
    } catch (err) {
      if (!(err instanceof OptionValueError)) throw err;
      problems.push(err.message.replace(spec.flag, spec.env));
    }
  }
  return { values, problems };
}
