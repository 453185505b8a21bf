/**
 * `cybercom createsuperuser`: create the administrator, or update its e-mail and password when
 * it exists (so installer re-runs are safe). Non-interactive; the password comes from a file or
 * an environment variable, never from the command line (process lists and shell history would
 * show it). Exit codes: 0 done, 1 failed (e.g. database unreachable), 2 usage error,
 * 78 invalid configuration.
 */
import { readFile } from 'node:fs/promises';
import { ConfigError, loadSettings } from '../config/settings.js';
import { connectMongo } from '../db/mongo-client.js';
import { isApiError } from '../errors.js';
import { createLogger } from '../log/logger.js';
import { createAuthModule } from './index.js';
import { weakPasswordError } from './password-strength.js';
import { assertValidEmail, assertValidUsername } from './user-fields.js';

export const CREATESUPERUSER_USAGE = `Usage: cybercom createsuperuser --username NAME --email ADDRESS (--password-file FILE | --password-env VAR)

Creates the administrator account, or updates its e-mail and password when it already exists.

Options:
  --username NAME        Login name (letters, digits and @ . + - _).
  --email ADDRESS        E-mail address of the administrator.
  --password-file FILE   Read the password from FILE (one trailing newline is ignored).
  --password-env VAR     Read the password from the environment variable VAR.
  -h, --help             Show this text.

Settings (database connection, SERVICE_DATABASE) come from the environment and the env file
named by ENV_FILE (default .env). The password must have at least 8 characters, not only
digits, not the username and not a common password.
`;

export interface CliOutput {
  stdout: { write(text: string): unknown };
  stderr: { write(text: string): unknown };
}

const EXIT_OK = 0;
const EXIT_FAILED = 1;
const EXIT_USAGE = 2;
const EXIT_CONFIG = 78;

class UsageError extends Error {}

interface Options {
  username: string;
  email: string;
  passwordFile?: string;
  passwordEnv?: string;
  help: boolean;
}

const VALUE_OPTIONS = new Set(['--username', '--email', '--password-file', '--password-env']);

export function parseCreateSuperuserArgs(argv: readonly string[]): Options {
  const values = new Map<string, string>();
  let help = false;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    if (arg === '-h' || arg === '--help') {
      help = true;
      continue;
    }
    const eq = arg.indexOf('=');
    const name = arg.startsWith('--') && eq !== -1 ? arg.slice(0, eq) : arg;
    if (name === '--password' || name === '-p') {
      throw new UsageError(
        'A password on the command line would be visible in the process list and shell history: use --password-file or --password-env.',
      );
    }
    if (!VALUE_OPTIONS.has(name)) throw new UsageError(`Unknown argument "${arg}".`);
    let value: string | undefined;
    if (eq !== -1 && name !== arg) value = arg.slice(eq + 1);
    else value = argv[++i];
    if (value === undefined || (value.startsWith('--') && name === arg)) throw new UsageError(`${name} needs a value.`);
    if (values.has(name)) throw new UsageError(`${name} was given twice.`);
    values.set(name, value);
  }
  if (help) return { username: '', email: '', help: true };
  const username = values.get('--username');
  const email = values.get('--email');
  if (username === undefined) throw new UsageError('--username is required.');
  if (email === undefined) throw new UsageError('--email is required.');
  const passwordFile = values.get('--password-file');
  const passwordEnv = values.get('--password-env');
  if ((passwordFile === undefined) === (passwordEnv === undefined)) {
    throw new UsageError('Give exactly one of --password-file and --password-env.');
  }
  const options: Options = { username, email, help: false };
  if (passwordFile !== undefined) options.passwordFile = passwordFile;
  if (passwordEnv !== undefined) options.passwordEnv = passwordEnv;
  return options;
}

async function readPassword(options: Options, env: Record<string, string | undefined>): Promise<string> {
  let password: string;
  if (options.passwordFile !== undefined) {
    try {
      password = (await readFile(options.passwordFile, 'utf8')).replace(/\r?\n$/, '');
    } catch (err) {
      throw new UsageError(`Cannot read the password file ${options.passwordFile}: ${(err as Error).message}`);
    }
  } else {
    const name = options.passwordEnv as string;
    password = env[name] ?? process.env[name] ?? '';
    if (password === '') throw new UsageError(`The environment variable ${name} is not set or empty.`);
  }
  if (password === '') throw new UsageError('The password is empty.');
  return password;
}

export async function runCreateSuperuser(
  argv: string[],
  env: Record<string, string | undefined>,
  out: CliOutput = { stdout: process.stdout, stderr: process.stderr },
): Promise<number> {
  let options: Options;
  let password: string;
  try {
    options = parseCreateSuperuserArgs(argv);
    if (options.help) {
      out.stdout.write(CREATESUPERUSER_USAGE);
      return EXIT_OK;
    }
    assertValidUsername(options.username);
    assertValidEmail(options.email);
    password = await readPassword(options, env);
    const weak = weakPasswordError(password, options.username);
    if (weak !== null) throw new UsageError(weak.message);
  } catch (err) {
    if (!(err instanceof UsageError) && !isApiError(err)) throw err;
    out.stderr.write(`createsuperuser: ${err.message}\n\n${CREATESUPERUSER_USAGE}`);
    return EXIT_USAGE;
  }

  let settings;
  try {
    settings = loadSettings(env);
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    out.stderr.write(`createsuperuser: ${err.message}\n`);
    return EXIT_CONFIG;
  }

  const logger = createLogger('warn', 'createsuperuser');
  let mongo;
  try {
    // Users live in the service's private store (the main database unless one is configured).
    mongo = await connectMongo(settings.privateMongo);
  } catch (err) {
    // The URI may embed credentials: name only the host part.
    out.stderr.write(`createsuperuser: cannot reach the database at ${hostOf(settings.privateMongo.uri)}: ${(err as Error).message}\n`);
    return EXIT_FAILED;
  }
  try {
    out.stdout.write(`Connecting to service database "${settings.serviceDatabase}"...\n`);
    const auth = await createAuthModule({ settings, logger, mongo, db: mongo.db(settings.serviceDatabase) });
    try {
      const existed = (await auth.models.User.exists({ username: options.username })) !== null;
      const user = await auth.users.ensureSuperuser({ username: options.username, email: options.email, password });
      out.stdout.write(`Superuser "${user.username}" ${existed ? 'updated' : 'created'}.\n`);
      return EXIT_OK;
    } finally {
      await auth.close();
    }
  } catch (err) {
    const message = isApiError(err) ? err.message : (err as Error).message;
    out.stderr.write(`createsuperuser: failed: ${message}\n`);
    return EXIT_FAILED;
  } finally {
    await mongo.close();
  }
}

function hostOf(uri: string): string {
  const match = /^[a-z+]+:\/\/(?:[^@/]*@)?([^/?]+)/i.exec(uri);
  return match?.[1] ?? '(the configured MONGO_URI)';
}
