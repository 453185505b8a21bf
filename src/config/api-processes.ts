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
 * API processes the cores allow: one per core but one, since the database engine and the broker
 * share the machine and need a core's worth between them. Measured on two cores with the engine,
 * the broker and the load beside them, a second API process served no more requests than one
 * (0.85 to 1.05 of one process's rate) and cost another ~100 MB of memory; from three cores up,
 * each process added has a core of its own to run on.
 */
function processesByCores(cores: number): number {
  return Math.max(1, cores - 1);
}

/**
 * The default: one per core but one, and no more than one per GiB of memory (at least one), so
 * a small machine does not spend its memory on idle API processes.
 */
export function defaultApiProcesses(cores = availableParallelism(), memoryBytes = totalmem()): number {
  return Math.max(1, Math.min(processesByCores(cores), Math.floor(memoryBytes / MEMORY_PER_PROCESS)));
}

/** The reason behind defaultApiProcesses(), for the installer's summary. */
export function apiProcessesReason(cores = availableParallelism(), memoryBytes = totalmem()): string {
  const byMemory = Math.floor(memoryBytes / MEMORY_PER_PROCESS);
  const gib = (memoryBytes / 1024 ** 3).toFixed(1);
  return byMemory < processesByCores(cores)
    ? `limited by memory: ${gib} GiB, one process per GiB`
    : `one per core but one, left to the database and the broker (${cores} cores, ${gib} GiB)`;
}
