/** How many API processes share the HTTP port (API_PROCESSES, the installer's --api-processes). */
import { availableParallelism, totalmem } from 'node:os';

/** A sanity bound: far more processes than cores only adds memory and context switches. */
export const MAX_API_PROCESSES = 256;

/**
 * Memory each API process is given room for: about 100 MB idle, up to a few hundred MB while it
 * streams large listings, beside the database and the broker on the same machine.
 */
const MEMORY_PER_PROCESS = 1024 ** 3;

/**
 * The default: one per core the machine offers this process, and no more than one per GiB of
 * memory (at least one), so a small machine does not spend its memory on idle API processes.
 */
export function defaultApiProcesses(cores = availableParallelism(), memoryBytes = totalmem()): number {
  return Math.max(1, Math.min(cores, Math.floor(memoryBytes / MEMORY_PER_PROCESS)));
}

/** The reason behind defaultApiProcesses(), for the installer's summary. */
export function apiProcessesReason(cores = availableParallelism(), memoryBytes = totalmem()): string {
  const byMemory = Math.floor(memoryBytes / MEMORY_PER_PROCESS);
  const gib = (memoryBytes / 1024 ** 3).toFixed(1);
  return byMemory < cores ? `limited by memory: ${gib} GiB, one process per GiB` : `one per core (${cores} cores, ${gib} GiB)`;
}
