/**
 * The environment of a stock Python Celery process in the interop tests (interop_app.py reads
 * everything from it): the suite's service settings plus the test's queue and result collection,
 * with the chosen virtualenv first on PATH.
 */
import type { ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { testServices } from './services.js';

export const celeryDir = fileURLToPath(new URL('./celery/', import.meta.url));
/** Where the `cybercom` Python package (and its Celery extension, cybercom.celery) lives. */
const pythonPackageDir = fileURLToPath(new URL('../../clients/python/src/', import.meta.url));

export interface CeleryEnvOptions {
  /** The virtualenv directory (its bin/ goes first on PATH). */
  venv: string;
  queue: string;
  resultDatabase: string;
  resultCollection?: string;
  /** The app loads the cybercom.celery extension (and signature_tasks.py). */
  cybercomExtension?: boolean;
}

export function celeryEnv(o: CeleryEnvOptions): NodeJS.ProcessEnv {
  // `celery` reads BROKER_URL as its --broker option; interop_app.py takes the URL by another name.
  const { BROKER_URL, ...services } = testServices().env;
  return {
    PATH: `${join(o.venv, 'bin')}:${process.env.PATH ?? ''}`,
    HOME: process.env.HOME ?? '/tmp',
    PYTHONPATH: `${celeryDir}:${pythonPackageDir}`,
    PYTHONDONTWRITEBYTECODE: '1',
    ...services,
    INTEROP_BROKER_URL: BROKER_URL,
    RESULT_DATABASE: o.resultDatabase,
    RESULT_COLLECTION: o.resultCollection ?? 'tombstone',
    INTEROP_QUEUE: o.queue,
    ...(o.cybercomExtension ? { INTEROP_CYBERCOM_EXTENSION: '1' } : {}),
  };
}

/**
 * Stops a Celery process as its operator would: SIGTERM (a warm shutdown), SIGKILL after
 * `graceMs`. Resolves with its exit code or signal; at once when it has already exited.
 */
export async function stopProcess(child: ChildProcess, graceMs: number): Promise<number | string | null> {
  if (child.exitCode !== null || child.signalCode !== null) return child.exitCode ?? child.signalCode;
  const exited = new Promise<number | string | null>((resolve) => child.once('exit', (code, signal) => resolve(code ?? signal)));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
  try {
    return await exited;
  } finally {
    clearTimeout(timer);
  }
}
