/**
 * `./installer`: installs or upgrades the whole service on this machine. Interactive in a
 * terminal (every question shows its default; invalid answers are asked again), or
 * non-interactive with flags and CYBERCOM_* variables (`--yes` accepts every default).
 * Exit codes: 0 done, 1 a step failed (named in the output and logs/install.log),
 * 2 invalid or missing settings, 130 interrupted.
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { readPreviousAnswers, type InstallConfig } from '../installation/install-config.js';
import { defaultInstallDir, installLayout } from '../installation/layout.js';
import { compareVersions, detectCompose, detectEngine, MIN_COMPOSE_VERSION } from '../installation/runner/compose-command.js';
import {
  adminPasswordProblem,
  askAdminPassword,
  collectAnswers,
  InvalidAnswersError,
  MissingAnswersError,
  toInstallConfig,
} from './answers.js';
import { parseInstallerArguments, UsageError, valuesFromEnvironment, type InstallerArguments } from './arguments.js';
import { OPTIONS } from './options.js';
import { Progress } from './progress.js';
import { terminalPrompter, type Prompter } from './prompter.js';
import { runSteps } from './run-steps.js';
import { StepFailure, type InstallContext } from './step.js';
import { INSTALL_STEPS } from './steps/index.js';

export const EXIT = { ok: 0, failed: 1, usage: 2, interrupted: 130 } as const;

export function installerHelp(): string {
  const width = Math.max(...OPTIONS.map((o) => `${o.flag} ${o.kind === 'boolean' ? '' : 'VALUE'}`.length), 28);
  const row = (left: string, text: string, env?: string): string => `  ${left.padEnd(width)}  ${text}${env ? ` [${env}]` : ''}`;
  return [
    'Usage: ./installer [options]',
    '',
    'Installs the cybercom service (API, worker, RabbitMQ, MongoDB, proxy) on this machine, or',
    'upgrades an existing installation in place (data, secrets and certificates are kept).',
    'In a terminal it asks for every setting, showing the default; otherwise give settings as',
    'flags or environment variables, and --yes to accept the defaults of the rest.',
    '',
    'Run:',
    row('--dir DIR', 'install directory: configuration, secrets, certificates, data, logs (default ./cybercom-data)', 'CYBERCOM_DIR'),
    row('-y, --yes', 'ask nothing; accept the default of every setting not given'),
    row('--non-interactive', 'ask nothing; fail listing the settings that were not given'),
    row('--force-certs', 'issue every certificate anew, CA included (remote workers then need a new bundle)'),
    row('--no-start', 'write configuration and certificates only; start nothing'),
    row('-h, --help', 'show this text'),
    '',
    'Settings:',
    ...OPTIONS.map((o) =>
      row(`${o.flag}${o.kind === 'boolean' ? '[=BOOL]' : o.kind === 'choice' ? ` ${o.choices?.join('|')}` : ' VALUE'}`, o.help, o.env),
    ),
    row(
      '--admin-password-file FILE',
      'administrator password from a file (else: asked, or generated and shown once)',
      'CYBERCOM_ADMIN_PASSWORD holds the password itself',
    ),
    '',
    'Booleans also take --no-FLAG. Flags win over environment variables; both win over the answers',
    'of the previous run, which win over the built-in defaults.',
    '',
    'Exit codes: 0 done, 1 a step failed, 2 invalid or missing settings, 130 interrupted.',
    '',
  ].join('\n');
}

async function detectRuntime(): Promise<'compose' | 'local'> {
  const engine = await detectEngine();
  if ('error' in engine) return 'local';
  const compose = await detectCompose();
  return compose && compareVersions(compose.version, MIN_COMPOSE_VERSION) >= 0 ? 'compose' : 'local';
}

function readPasswordFile(file: string): string {
  return readFileSync(file, 'utf8').replace(/\r?\n$/, '');
}

interface Plan {
  config: InstallConfig;
  adminPassword: string | undefined;
  previous: Partial<InstallConfig> | undefined;
  dir: string;
}

async function plan(
  args: InstallerArguments,
  env: NodeJS.ProcessEnv,
  prompter: Prompter | undefined,
  progress: Progress,
): Promise<Plan | undefined> {
  const fromEnv = valuesFromEnvironment(env);
  if (fromEnv.problems.length > 0) throw new InvalidAnswersError(fromEnv.problems);
  let dir = resolve(args.dir ?? env.CYBERCOM_DIR ?? defaultInstallDir());
  if (prompter && args.dir === undefined && env.CYBERCOM_DIR === undefined) {
    dir = resolve(
      await prompter.text('Install directory (configuration, secrets, certificates, data)', dir, (v) =>
        v.trim() === '' ? 'an answer is required' : undefined,
      ),
    );
  }
  const layout = installLayout(dir);
  const previous = await readPreviousAnswers(layout.installConfigFile);
  if (previous) progress.line(`Existing installation in ${dir}: its answers are the defaults (upgrade in place).`);
  const given = { ...fromEnv.values, ...args.values };
  const detectedRuntime = given.runtime ?? previous?.runtime ?? (await detectRuntime());
  const answers = await collectAnswers({
    given,
    previous,
    detectedRuntime,
    prompter,
    acceptDefaults: args.yes,
    warn: (t) => progress.warn(t),
  });

  let adminPassword: string | undefined;
  if (args.adminPasswordFile) adminPassword = readPasswordFile(args.adminPasswordFile);
  else if (env.CYBERCOM_ADMIN_PASSWORD) adminPassword = env.CYBERCOM_ADMIN_PASSWORD;
  if (adminPassword !== undefined) {
    const problem = adminPasswordProblem(adminPassword, answers.adminUsername);
    if (problem) throw new InvalidAnswersError([`administrator password: ${problem}`]);
  } else if (prompter) {
    adminPassword = await askAdminPassword(prompter, answers.adminUsername, previous ? 'keep' : 'generate');
  }
  const config = toInstallConfig(answers);
  if (prompter) {
    progress.line(
      `\nInstall into ${dir} with runtime ${config.runtime}, public URL ${config.publicHost || 'http://localhost'} (ports: http ${config.ports.http}, broker ${config.ports.broker}, database ${config.ports.database}).`,
    );
    if (!(await prompter.yesNo('Proceed?', true))) return undefined;
  }
  return { config, adminPassword, previous, dir };
}

export async function runInstaller(argv: string[], env: NodeJS.ProcessEnv = process.env, progress = new Progress()): Promise<number> {
  let args: InstallerArguments;
  try {
    args = parseInstallerArguments(argv);
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    process.stderr.write(`installer: ${err.problems.join('\ninstaller: ')}\n(see ./installer --help)\n`);
    return EXIT.usage;
  }
  if (args.help) {
    process.stdout.write(installerHelp());
    return EXIT.ok;
  }
  const interactive = !args.yes && !args.nonInteractive && process.stdin.isTTY === true && process.stdout.isTTY === true;
  if (!interactive && !args.yes && !args.nonInteractive) {
    process.stderr.write('installer: no terminal to ask questions on: pass --yes to accept the defaults (see --help for every flag)\n');
    return EXIT.usage;
  }

  let planned: Plan | undefined;
  try {
    planned = await plan(args, env, interactive ? terminalPrompter() : undefined, progress);
  } catch (err) {
    if (err instanceof MissingAnswersError || err instanceof InvalidAnswersError) {
      process.stderr.write(`installer: ${err.message}\n`);
      return EXIT.usage;
    }
    if ((err as Error).name === 'ExitPromptError') return EXIT.interrupted;
    throw err;
  }
  if (!planned) {
    progress.line('Nothing done.');
    return EXIT.ok;
  }
  const layout = installLayout(planned.dir);
  const ctx: InstallContext = {
    layout,
    config: planned.config,
    isUpgrade: planned.previous !== undefined,
    previous: planned.previous,
    adminPassword: planned.adminPassword,
    forceCerts: args.forceCerts,
    noStart: args.noStart,
    env,
    progress,
    missingPrerequisites: [],
    ownRunningServices: false,
    summary: [],
  };
  const started = Date.now();
  try {
    await runSteps(INSTALL_STEPS, ctx);
  } catch (err) {
    if (!(err instanceof StepFailure)) throw err;
    progress.line(`\nInstallation failed at step "${err.step.title}".`);
    progress.line(`Fix the cause and run ./installer --dir ${layout.root} again: finished steps are kept.`);
    if (progress.logPath) progress.line(`Full log: ${progress.logPath}`);
    return EXIT.failed;
  }
  progress.line(`\nDone in ${((Date.now() - started) / 1000).toFixed(0)} s.`);
  return EXIT.ok;
}
