/**
 * The memory settings of an API process: Node flags and allocator environment that keep an idle
 * process small and let it give memory back after a burst of requests (docs/memory-budget.md
 * has the measurements behind each value).
 *
 * - `--max-semi-space-size`: V8's young generation grows to 16 MB per semi-space under load (up
 *   to about 48 MB of RSS) and shrinks only after a long quiet spell. The API's requests allocate
 *   small, short-lived objects, for which 8 MB is plenty; at 2 MB a streamed download of
 *   100,000 records spent a third of its CPU in the collector (8 MB: a quarter less CPU per read,
 *   for about 15 MB more idle RSS).
 * - `MALLOC_ARENA_MAX`: glibc gives every thread that allocates (V8's GC helpers, libuv's pool)
 *   an arena of its own and rarely returns their pages; two arenas serve an event loop well.
 * - `MALLOC_MMAP_THRESHOLD_`: glibc serves a block of 128 KiB or more with a mapping of its own,
 *   unmapped when freed, but raises that threshold to the size of each such block freed (up to
 *   32 MiB). The API frees blocks of MBs all the time (the driver's replies, request bodies,
 *   Buffer.concat), so after the first few every large block came from the arenas, whose free
 *   space stays resident and fragmented: 4 MB buffers allocated and collected in rounds kept
 *   126 MB resident against 77 MB with the threshold held at 128 KiB. Held, a collected large
 *   buffer goes back to the system at once; the cost is a mapping per large block.
 *
 * An operator's own value (a flag in the command line or NODE_OPTIONS, a variable in the
 * environment) always wins over these defaults.
 */

/** The young generation's semi-space, in MB. */
export const API_SEMI_SPACE_MB = 8;
/** glibc's malloc arenas per process. */
export const API_MALLOC_ARENAS = 2;
/** The size from which glibc's malloc maps a block of its own, in bytes (its initial value, held there). */
export const API_MMAP_THRESHOLD_BYTES = 128 * 1024;

const SEMI_SPACE_FLAG = /^--max[-_]semi[-_]space[-_]size(=|$)/;

/** The Node flags for an API process, given the flags (and NODE_OPTIONS) it would otherwise get. */
export function apiExecArgv(execArgv: readonly string[], nodeOptions = ''): string[] {
  const given = [...execArgv, ...nodeOptions.split(/\s+/)].some((flag) => SEMI_SPACE_FLAG.test(flag));
  return given ? [...execArgv] : [...execArgv, `--max-semi-space-size=${API_SEMI_SPACE_MB}`];
}

/** The environment variables an API process needs at exec time (read by the C library), each unless `env` sets it. */
export function apiProcessEnv(env: Record<string, string | undefined>): Record<string, string> {
  const defaults: Record<string, string> = {
    MALLOC_ARENA_MAX: String(API_MALLOC_ARENAS),
    MALLOC_MMAP_THRESHOLD_: String(API_MMAP_THRESHOLD_BYTES),
  };
  return Object.fromEntries(Object.entries(defaults).filter(([name]) => env[name] === undefined));
}

/** A value quoted for a POSIX shell (single quotes; a quote inside becomes '\''). */
const shellQuoted = (value: string): string => `'${value.replaceAll("'", `'\\''`)}'`;

/**
 * The same settings as `export` lines for a shell that then starts the API process (the API
 * image's start script): NODE_OPTIONS gains the young-generation flag unless the operator gave
 * one, each malloc variable is set unless the operator did. Nothing when all are the operator's.
 */
export function apiMemoryExports(env: Record<string, string | undefined>): string[] {
  const nodeOptions = env.NODE_OPTIONS ?? '';
  const flags = apiExecArgv([], nodeOptions);
  const lines = Object.entries(apiProcessEnv(env)).map(([name, value]) => `export ${name}=${shellQuoted(value)}`);
  if (flags.length > 0) lines.push(`export NODE_OPTIONS=${shellQuoted([nodeOptions.trim(), ...flags].filter(Boolean).join(' '))}`);
  return lines;
}
