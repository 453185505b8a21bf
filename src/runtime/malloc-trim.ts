/**
 * Gives the C library's free memory back to the system: glibc's `malloc_trim`.
 *
 * Under a burst of requests malloc's main heap grows (socket and TLS buffers, the driver's new
 * pool connections, V8's compiler zones) and keeps the size it grew to: glibc returns only the
 * free space at the top of its heap on its own, and a few blocks that outlive the burst hold the
 * top up. Measured after a load round, the heap held 21 MB of which 9 MB were in use; the free
 * chunks between the live ones stay resident until `malloc_trim` releases their pages
 * (`madvise`), which nothing calls unless the program does. Node has no binding for it, so it is
 * called through koffi's foreign-function interface.
 *
 * Only glibc has `malloc_trim`: elsewhere (musl, macOS) there is nothing to trim this way and
 * the function is absent.
 */
import { createRequire } from 'node:module';
import type * as Koffi from 'koffi';

/** Releases malloc's free pages; returns whether any memory went back to the system. */
export type MallocTrim = () => boolean;

/**
 * Loads `malloc_trim` from the C library of the running process, or returns undefined where it
 * cannot be had (no glibc, or koffi has no build for this platform). Loaded once at start-up,
 * not at the first trim: the library's own pages are then part of the idle process rather than
 * a rise after the first burst.
 */
export function loadMallocTrim(): MallocTrim | undefined {
  if (process.platform !== 'linux') return undefined;
  try {
    const koffi = createRequire(import.meta.url)('koffi') as typeof Koffi;
    const trim = koffi.load('libc.so.6').func('int malloc_trim(size_t pad)');
    // A pad of 0: keep nothing spare at the top of the heap either.
    return () => trim(0) === 1;
  } catch {
    return undefined;
  }
}
