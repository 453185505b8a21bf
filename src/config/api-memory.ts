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
 * - `--heap-growing-percent`: after a major collection V8 lets the old generation grow to up to
 *   four times what the collection kept before it collects again. A session's requests promote
 *   much that dies soon after (a parsed upload of 10 MB, a page's rows, a task's result), so the
 *   old generation reached 100-140 MB before V8 collected it, and the peak RSS of a mixed
 *   session 250-285 MB. Held at 50 % past what was kept, V8 collects every few tens of MB: the
 *   same session peaked at 200-220 MB, for no measurable rise in the process's CPU time. V8
 *   refuses this flag in NODE_OPTIONS, so the serving process sets it itself at start-up
 *   (apiRuntimeFlags), before it loads the service; V8 reads it at every collection.
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

/** How far past what a major collection kept V8 lets the old generation grow before the next, in percent. */
export const API_HEAP_GROWING_PERCENT = 50;

const SEMI_SPACE_FLAG = /^--max[-_]semi[-_]space[-_]size(=|$)/;
const HEAP_GROWING_FLAG = /^--heap[-_]growing[-_]percent(=|$)/;

/**
 * The V8 flags a serving API process sets on itself at start-up (v8.setFlagsFromString), given
 * the flags it was started with: those V8 accepts only on the command line, not in NODE_OPTIONS,
 * which the API image's start script passes the settings in. None that the command line sets.
 */
export function apiRuntimeFlags(execArgv: readonly string[]): string[] {
  return execArgv.some((flag) => HEAP_GROWING_FLAG.test(flag)) ? [] : [`--heap-growing-percent=${API_HEAP_GROWING_PERCENT}`];
}

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
