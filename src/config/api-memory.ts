/**
 * The memory settings of an API process: Node flags and allocator environment that keep an idle
 * process small and let it give memory back after a burst of requests (docs/memory-budget.md
 * has the measurements behind each value).
 *
 * - `--max-semi-space-size`: V8's young generation grows to 16 MB per semi-space under load (up
 *   to about 48 MB of RSS) and shrinks only after a long quiet spell. The API's requests allocate
 *   small, short-lived objects, for which a few MB is plenty.
 * - `--heap-growing-percent`: V8 starts the next major collection once the old generation has
 *   grown by a factor it picks (up to 4 for a small heap) over what the previous one kept. A long
 *   download promotes every batch it holds while rendering it, so the old generation filled with
 *   60 MB of dead batches before V8 collected them. 20 % keeps that garbage to a few MB, for a
 *   major collection (incremental and concurrent, a few ms of the main thread) every few MB.
 * - `MALLOC_ARENA_MAX`: glibc gives every thread that allocates (V8's GC helpers, libuv's pool)
 *   an arena of its own and rarely returns their pages; two arenas serve an event loop well.
 * - `MALLOC_MMAP_THRESHOLD_`: a burst of requests passes many short-lived buffers of 8 kB and
 *   more through malloc (socket reads, TLS records, compiler zones). In the main heap their
 *   freed space stays resident: glibc gives back only the top of the heap, and a few long-lived
 *   blocks allocated during the burst hold it up (measured: 17 MB of heap, 9 MB in use, after a
 *   load). Mapped on their own instead, each goes back to the system when freed. Setting the
 *   threshold also stops glibc from raising it on its own after large frees.
 *
 * An operator's own value (a flag in the command line or NODE_OPTIONS, a variable in the
 * environment) always wins over these defaults.
 */

/** The young generation's semi-space, in MB. */
export const API_SEMI_SPACE_MB = 2;
/** How far V8 lets the old generation grow past what its last major collection kept, in %. */
export const API_HEAP_GROWING_PERCENT = 20;
/** glibc's malloc arenas per process. */
export const API_MALLOC_ARENAS = 2;
/** Allocations of at least this many bytes get pages of their own (glibc's mmap threshold). */
export const API_MALLOC_MMAP_THRESHOLD = 8192;

/** Each flag the API sets, with the pattern that finds an operator's own value for it. */
const API_FLAGS: ReadonlyArray<{ flag: string; given: RegExp }> = [
  { flag: `--max-semi-space-size=${API_SEMI_SPACE_MB}`, given: /^--max[-_]semi[-_]space[-_]size(=|$)/ },
  { flag: `--heap-growing-percent=${API_HEAP_GROWING_PERCENT}`, given: /^--heap[-_]growing[-_]percent(=|$)/ },
];

/** The Node flags for an API process, given the flags (and NODE_OPTIONS) it would otherwise get. */
export function apiExecArgv(execArgv: readonly string[], nodeOptions = ''): string[] {
  const present = [...execArgv, ...nodeOptions.split(/\s+/)];
  const added = API_FLAGS.filter(({ given }) => !present.some((flag) => given.test(flag))).map(({ flag }) => flag);
  return [...execArgv, ...added];
}

/** The environment variables an API process needs at exec time (read by the C library). */
export function apiProcessEnv(env: Record<string, string | undefined>): Record<string, string> {
  const defaults: Record<string, string> = {
    MALLOC_ARENA_MAX: String(API_MALLOC_ARENAS),
    MALLOC_MMAP_THRESHOLD_: String(API_MALLOC_MMAP_THRESHOLD),
  };
  return Object.fromEntries(Object.entries(defaults).filter(([name]) => env[name] === undefined));
}
