/** How many API processes share the HTTP port (API_PROCESSES, the installer's --api-processes). */
import { availableParallelism } from 'node:os';

/** A sanity bound: far more processes than cores only adds memory and context switches. */
export const MAX_API_PROCESSES = 256;

/** The default: one per core the machine offers this process. */
export function defaultApiProcesses(): number {
  return availableParallelism();
}
