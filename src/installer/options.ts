/**
 * Every installer setting in one table: its command-line flag, its environment variable, its
 * help text, how it is validated, its default (which may depend on earlier answers and on the
 * previous installation), and whether and how it is asked interactively. Flag parsing, --help,
 * the prompts and the non-interactive checks are all driven by this table.
 */
import { isIP } from 'node:net';
import { parseBoolean } from '../config/env-values.js';
import { validateHostName } from '../installation/host-names.js';
import { isValidEmail } from '../auth/user-fields.js';
import { MAX_API_PROCESSES, defaultApiProcesses } from '../config/api-processes.js';
import { USERNAME_PATTERN } from '../auth/models.js';
import { CERT_RENEWAL_MODES, DB_ENGINES, TOPOLOGIES, type InstallConfig, type Topology } from '../installation/install-config.js';

export type OptionKind = 'string' | 'boolean' | 'integer' | 'choice' | 'list';

/** The answers while they are being collected: every key of InstallConfig flattened, plus the directory. */
export interface Answers {
  dir: string;
  runtime: 'compose' | 'local';
  adminUsername: string;
  adminEmail: string;
  publicHost: string;
  https: 'none' | 'acme' | 'files';
  acmeEmail: string;
  tlsCertFile: string;
  tlsKeyFile: string;
  allowedHosts: string[];
  debug: boolean;
  certValidityDays: number;
  dataStoreAnonymous: boolean;
  catalogAnonymous: boolean;
  httpPort: number;
  httpsPort: number;
  brokerPort: number;
  dbPort: number;
  dbEngine: (typeof DB_ENGINES)[number];
  topology: Topology;
  apiProcesses: number;
  certRenewal: (typeof CERT_RENEWAL_MODES)[number];
}

export type AnswerKey = keyof Answers;

export interface DefaultContext {
  answers: Partial<Answers>;
  previous: Partial<InstallConfig> | undefined;
  /** Runtime found on this machine (auto-detection). */
  detectedRuntime: 'compose' | 'local';
}

export interface OptionSpec<K extends AnswerKey = AnswerKey> {
  key: K;
  flag: string;
  env: string;
  kind: OptionKind;
  choices?: readonly string[];
  /** The choices that fit the answers so far (asked interactively); default: all of `choices`. */
  choicesFor?: (a: Partial<Answers>) => readonly string[];
  help: string;
  /** The question; options without one are flags only. */
  question?: string;
  /** Asked (and required) only when this holds. */
  when?: (a: Partial<Answers>) => boolean;
  /** undefined = no default: the value is required. */
  defaultValue: (ctx: DefaultContext) => Answers[K] | undefined;
  /** An error message, or undefined when valid. */
  validate?: (value: Answers[K], a: Partial<Answers>) => string | undefined;
}

/** localhost names plus the public host: what ALLOWED_HOSTS defaults to. */
export function derivedAllowedHosts(publicHost: string): string[] {
  const local = ['localhost', '127.0.0.1', '[::1]'];
  if (publicHost === '') return local;
  const host = isIP(publicHost) === 6 ? `[${publicHost}]` : publicHost.toLowerCase();
  return [host, ...local.filter((h) => h !== host)];
}

const isDomain = (a: Partial<Answers>): boolean => (a.publicHost ?? '') !== '';

function defined<T>(value: T | undefined): value is T {
  return value !== undefined;
}

/**
 * Any one option, as a union over the keys: each member's validator and default keep the type of
 * its own key's value, which a single OptionSpec<AnswerKey> would widen to every key's.
 */
export type AnyOptionSpec = { [K in AnswerKey]: OptionSpec<K> }[AnswerKey];

/** Checks each entry of the table against its own key's value type. */
function option<K extends AnswerKey>(spec: OptionSpec<K>): OptionSpec<K> {
  return spec;
}

function validatePort(value: number): string | undefined {
  return Number.isInteger(value) && value >= 1 && value <= 65535 ? undefined : 'a port is a whole number from 1 to 65535';
}

/**
 * A port the installation publishes: by default the one the previous installation used for
 * `service`, else `standard`.
 */
function portOption<K extends 'httpPort' | 'httpsPort' | 'brokerPort' | 'dbPort'>(
  spec: Pick<OptionSpec<K>, 'key' | 'flag' | 'env' | 'help'>,
  service: 'http' | 'https' | 'broker' | 'database',
  standard: number,
): OptionSpec<K> {
  return { ...spec, kind: 'integer', defaultValue: (ctx) => ctx.previous?.ports?.[service] ?? standard, validate: validatePort };
}

/**
 * The option's own check of `value`, which parseOptionValue (or a default) produced for this very
 * option, so it has the option's value type: the one place where that link is not seen by the
 * compiler.
 */
export function optionProblem(spec: AnyOptionSpec, value: Answers[AnswerKey], answers: Partial<Answers>): string | undefined {
  const validate = spec.validate as ((value: Answers[AnswerKey], a: Partial<Answers>) => string | undefined) | undefined;
  return validate?.(value, answers);
}

export const OPTIONS: readonly AnyOptionSpec[] = [
  option({
    key: 'runtime',
    flag: '--runtime',
    env: 'CYBERCOM_RUNTIME',
    kind: 'choice',
    choices: ['compose', 'local'],
    help: 'compose (Docker or Podman) or local (supervised processes); default: compose when a container engine with Compose v2 is available, else local',
    question: 'Runtime',
    defaultValue: (ctx) => ctx.previous?.runtime ?? ctx.detectedRuntime,
  }),
  option({
    key: 'adminUsername',
    flag: '--admin-username',
    env: 'CYBERCOM_ADMIN_USERNAME',
    kind: 'string',
    help: 'administrator of the web site (default admin)',
    question: 'Administrator username',
    defaultValue: (ctx) => ctx.previous?.admin?.username ?? 'admin',
    validate: (v) => (USERNAME_PATTERN.test(v) ? undefined : 'a username has 1 to 150 characters: letters, digits and @ . + - _'),
  }),
  option({
    key: 'publicHost',
    flag: '--public-host',
    env: 'CYBERCOM_PUBLIC_HOST',
    kind: 'string',
    help: 'public host name or domain of the service (empty = local install over plain HTTP)',
    question: 'Public host name or domain (empty = local install over plain HTTP)',
    defaultValue: (ctx) => ctx.previous?.publicHost ?? '',
    validate: (v) => validateHostName(v),
  }),
  option({
    key: 'adminEmail',
    flag: '--admin-email',
    env: 'CYBERCOM_ADMIN_EMAIL',
    kind: 'string',
    help: 'administrator e-mail (default admin@<public host>, or admin@localhost.localdomain)',
    question: 'Administrator e-mail',
    defaultValue: (ctx) => {
      if (ctx.previous?.admin?.email) return ctx.previous.admin.email;
      const host = ctx.answers.publicHost ?? ctx.previous?.publicHost ?? '';
      return host.includes('.') && isIP(host) === 0 ? `admin@${host}` : 'admin@localhost.localdomain';
    },
    validate: (v) => (isValidEmail(v) ? undefined : `"${v}" is not a valid e-mail address`),
  }),
  option({
    key: 'https',
    flag: '--https',
    env: 'CYBERCOM_HTTPS',
    kind: 'choice',
    choices: ['acme', 'files', 'none'],
    choicesFor: (a) => (a.runtime === 'local' ? ['files', 'none'] : ['acme', 'files']),
    help:
      'HTTPS for a public host: acme (automatic certificates through the compose proxy), files (your certificate and key; ' +
      'the only HTTPS mode of the local runtime, where the API serves it itself) or none (local runtime only: plain HTTP, ' +
      'for an HTTPS reverse proxy of your own in front)',
    question: 'HTTPS certificates',
    when: isDomain,
    defaultValue: (ctx) => {
      const previous = ctx.previous?.https;
      if (ctx.answers.runtime === 'local') return previous === 'files' || previous === 'none' ? previous : 'files';
      return previous === 'acme' || previous === 'files' ? previous : 'acme';
    },
    validate: (v, a) => {
      if (a.runtime === 'local' && v === 'acme') {
        return 'acme needs the proxy of the compose runtime; with --runtime local use --https files (your certificate) or none';
      }
      if (a.runtime === 'compose' && v === 'none') return 'the compose runtime serves a public host over HTTPS: acme or files';
      return undefined;
    },
  }),
  option({
    key: 'acmeEmail',
    flag: '--acme-email',
    env: 'CYBERCOM_ACME_EMAIL',
    kind: 'string',
    help: 'contact e-mail for the ACME account (default: the administrator e-mail)',
    question: 'Contact e-mail for the certificate authority (ACME)',
    when: (a) => isDomain(a) && a.runtime === 'compose' && a.https === 'acme',
    defaultValue: (ctx) => (ctx.previous?.acmeEmail || undefined) ?? ctx.answers.adminEmail,
    validate: (v) => (isValidEmail(v) ? undefined : `"${v}" is not a valid e-mail address`),
  }),
  option({
    key: 'tlsCertFile',
    flag: '--tls-cert-file',
    env: 'CYBERCOM_TLS_CERT_FILE',
    kind: 'string',
    help: 'with --https files: PEM certificate (full chain) for the public host',
    question: 'Certificate file (PEM, full chain)',
    when: (a) => isDomain(a) && a.https === 'files',
    defaultValue: (ctx) => ctx.previous?.tlsCertFile || undefined,
  }),
  option({
    key: 'tlsKeyFile',
    flag: '--tls-key-file',
    env: 'CYBERCOM_TLS_KEY_FILE',
    kind: 'string',
    help: 'with --https files: PEM private key of that certificate',
    question: 'Private key file (PEM)',
    when: (a) => isDomain(a) && a.https === 'files',
    defaultValue: (ctx) => ctx.previous?.tlsKeyFile || undefined,
  }),
  option({
    key: 'allowedHosts',
    flag: '--allowed-hosts',
    env: 'CYBERCOM_ALLOWED_HOSTS',
    kind: 'list',
    help: 'comma-separated Host names the API accepts (default: the public host plus localhost names)',
    question: 'ALLOWED_HOSTS (comma-separated)',
    defaultValue: (ctx) => {
      const host = ctx.answers.publicHost ?? '';
      const previous = ctx.previous?.allowedHosts;
      // Keep the operator's list unless the public host changed (then derive it anew).
      if (previous && (ctx.previous?.publicHost ?? '') === host) return previous;
      return derivedAllowedHosts(host);
    },
    validate: (v) =>
      v.length === 0
        ? 'list at least one host name'
        : v.map((h) => (h === '*' || h.startsWith('.') ? undefined : validateHostName(h))).find(defined),
  }),
  option({
    key: 'debug',
    flag: '--debug',
    env: 'CYBERCOM_DEBUG',
    kind: 'boolean',
    help: 'DEBUG mode: internal error details in responses (default false; never on a public server)',
    question: 'Turn DEBUG on?',
    defaultValue: (ctx) => ctx.previous?.debug ?? false,
  }),
  option({
    key: 'certValidityDays',
    flag: '--cert-days',
    env: 'CYBERCOM_CERT_DAYS',
    kind: 'integer',
    help: 'validity of issued server and client certificates in days (default 365)',
    question: 'Certificate validity in days',
    defaultValue: (ctx) => ctx.previous?.certValidityDays ?? 365,
    validate: (v) => (Number.isInteger(v) && v >= 1 && v <= 3650 ? undefined : 'a whole number of days from 1 to 3650'),
  }),
  option({
    key: 'dataStoreAnonymous',
    flag: '--data-store-anonymous',
    env: 'CYBERCOM_DATA_STORE_ANONYMOUS',
    kind: 'boolean',
    help: 'anonymous read access to the data store (default false)',
    question: 'Allow anonymous reads of the data store?',
    defaultValue: (ctx) => ctx.previous?.dataStoreAnonymous ?? false,
  }),
  option({
    key: 'catalogAnonymous',
    flag: '--catalog-anonymous',
    env: 'CYBERCOM_CATALOG_ANONYMOUS',
    kind: 'boolean',
    help: 'anonymous read access to the catalog (default false)',
    question: 'Allow anonymous reads of the catalog?',
    defaultValue: (ctx) => ctx.previous?.catalogAnonymous ?? false,
  }),
  portOption({ key: 'httpPort', flag: '--http-port', env: 'CYBERCOM_HTTP_PORT', help: 'public HTTP port (default 80)' }, 'http', 80),
  portOption(
    {
      key: 'httpsPort',
      flag: '--https-port',
      env: 'CYBERCOM_HTTPS_PORT',
      help: 'public HTTPS port (default 443): the compose proxy, or the API itself in the local runtime with --https files',
    },
    'https',
    443,
  ),
  portOption(
    {
      key: 'brokerPort',
      flag: '--broker-port',
      env: 'CYBERCOM_BROKER_PORT',
      help: 'AMQPS port of RabbitMQ, dialled by remote workers (default 5671)',
    },
    'broker',
    5671,
  ),
  portOption(
    { key: 'dbPort', flag: '--db-port', env: 'CYBERCOM_DB_PORT', help: 'TLS port of MongoDB, dialled by remote workers (default 27017)' },
    'database',
    27017,
  ),
  option({
    key: 'dbEngine',
    flag: '--db-engine',
    env: 'CYBERCOM_DB_ENGINE',
    kind: 'choice',
    choices: DB_ENGINES,
    help: 'local runtime: mongod, ferretdb, or auto (mongod when installed, else FerretDB)',
    defaultValue: (ctx) => ctx.previous?.dbEngine ?? 'auto',
  }),
  option({
    key: 'topology',
    flag: '--topology',
    env: 'CYBERCOM_TOPOLOGY',
    kind: 'choice',
    choices: TOPOLOGIES,
    help:
      'single (one database and one broker node, default) or cluster (compose runtime only: a three-member MongoDB replica set ' +
      'acknowledging writes by majority, and a three-node RabbitMQ cluster)',
    defaultValue: (ctx) => (ctx.answers.runtime === 'local' ? 'single' : (ctx.previous?.topology ?? 'single')),
    validate: (v, a) =>
      v === 'cluster' && a.runtime === 'local'
        ? 'the local runtime runs one database node (FerretDB or mongod) and one broker node: --topology cluster needs --runtime compose'
        : undefined,
  }),
  option({
    key: 'apiProcesses',
    flag: '--api-processes',
    env: 'CYBERCOM_API_PROCESSES',
    kind: 'integer',
    help: `API processes sharing the port, each restarted on its own if it ends (compose: API containers behind the proxy; local: processes of the API service); default: one per core but one, at most one per GiB of memory (${defaultApiProcesses()} here)`,
    defaultValue: (ctx) => ctx.previous?.apiProcesses ?? defaultApiProcesses(),
    validate: (v) =>
      Number.isInteger(v) && v >= 1 && v <= MAX_API_PROCESSES ? undefined : `a whole number from 1 to ${MAX_API_PROCESSES}`,
  }),
  option({
    key: 'certRenewal',
    flag: '--cert-renewal',
    env: 'CYBERCOM_CERT_RENEWAL',
    kind: 'choice',
    choices: CERT_RENEWAL_MODES,
    help: 'install a daily check that renews certificates 30 days before expiry (remote workers keep working until they get the rebuilt bundle): systemd (timer), cron, auto (systemd when running, else cron) or none (default)',
    defaultValue: (ctx) => ctx.previous?.certRenewal ?? 'none',
  }),
];

export class OptionValueError extends Error {}

/** Turns the text of a flag or environment variable into the option's type. */
export function parseOptionValue(spec: AnyOptionSpec, text: string): Answers[AnswerKey] {
  const value = text.trim();
  switch (spec.kind) {
    case 'boolean': {
      const flag = parseBoolean(value);
      if (flag === undefined) throw new OptionValueError(`${spec.flag}: "${text}" is not true or false`);
      return flag;
    }
    case 'integer': {
      if (!/^\d+$/.test(value)) throw new OptionValueError(`${spec.flag}: "${text}" is not a whole number`);
      return Number(value);
    }
    case 'choice':
      if (!spec.choices?.includes(value)) throw new OptionValueError(`${spec.flag}: "${text}" is not one of ${spec.choices?.join(', ')}`);
      return value as Answers[AnswerKey];
    case 'list':
      return value
        .split(',')
        .map((s) => s.trim())
        .filter((s) => s !== '');
    default:
      return value;
  }
}
