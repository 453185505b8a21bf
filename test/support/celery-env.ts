/**
 * The environment of a stock Python Celery process in the interop tests (interop_app.py reads
 * everything from it): the suite's service settings plus the test's queue and result collection,
 * with the chosen virtualenv first on PATH.
 */
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { testServices } from './services.js';

export const celeryDir = fileURLToPath(new URL('./celery/', import.meta.url));

export interface CeleryEnvOptions {
  /** The virtualenv directory (its bin/ goes first on PATH). */
  venv: string;
  queue: string;
  resultDatabase: string;
  resultCollection?: string;
}

export function celeryEnv(o: CeleryEnvOptions): NodeJS.ProcessEnv {
  // `celery` reads BROKER_URL as its --broker option; interop_app.py takes the URL by another name.
  const { BROKER_URL, ...services } = testServices().env;
  return {
    PATH: `${join(o.venv, 'bin')}:${process.env.PATH ?? ''}`,
    HOME: process.env.HOME ?? '/tmp',
    PYTHONPATH: celeryDir,
    PYTHONDONTWRITEBYTECODE: '1',
    ...services,
    INTEROP_BROKER_URL: BROKER_URL,
    RESULT_DATABASE: o.resultDatabase,
    RESULT_COLLECTION: o.resultCollection ?? 'tombstone',
    INTEROP_QUEUE: o.queue,
  };
}
