/**
 * Deadlines for work that waits on another process (a database, a broker): whatever that process
 * does — answers, fails, or never answers at all — the caller hears back by the deadline.
 */

/** Runs `work` within a deadline; `work` gets a signal that aborts when the deadline passes. */
export type Deadline = <T>(work: (signal: AbortSignal) => Promise<T>) => Promise<T>;

/**
 * Runs `work` with a signal that aborts `ms` from now, and settles by then whatever the work
 * does: at the deadline it rejects with `timedOut()` (also the signal's reason), even when the
 * work ignores its signal. Pass `controller` to have an existing one aborted instead (one whose
 * signal outlives this piece of work, such as a cursor's).
 */
export function withDeadline<T>(
  ms: number,
  timedOut: () => Error,
  work: (signal: AbortSignal) => Promise<T>,
  controller = new AbortController(),
): Promise<T> {
  // One promise settled by whichever comes first (a race of two promises would cost a third
  // promise and the reactions on both, for every database operation of every request). Once
  // given up on, the work's own late outcome (often the abort itself) is of no interest.
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => {
      const error = timedOut();
      controller.abort(error);
      reject(error);
    }, ms);
    let running: Promise<T>;
    try {
      running = work(controller.signal);
    } catch (err) {
      clearTimeout(timer);
      reject(err);
      return;
    }
    running.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (err: unknown) => {
        clearTimeout(timer);
        reject(err);
      },
    );
  });
}

/** A Deadline of `ms` for each piece of work, failing with `timedOut()`. */
export function deadline(ms: number, timedOut: () => Error): Deadline {
  return (work) => withDeadline(ms, timedOut, work);
}

/**
 * `callback`, to be called at most once: with the outcome when it comes within `ms`, otherwise
 * with `timedOut()` alone at the deadline (an outcome arriving later is dropped). For node-style
 * callback APIs whose calls may wait on another process for ever.
 */
export function callbackWithin<C extends (error: never, ...result: never[]) => void>(ms: number, timedOut: () => Error, callback: C): C {
  let called = false;
  // A node-style callback takes a failure as its only argument.
  const fail = callback as unknown as (error: Error) => void;
  const timer = setTimeout(() => {
    called = true;
    fail(timedOut());
  }, ms);
  return ((...outcome: Parameters<C>) => {
    if (called) return;
    called = true;
    clearTimeout(timer);
    (callback as (...args: Parameters<C>) => void)(...outcome);
  }) as C;
}

/** No deadline: the work gets a signal that never aborts (for callers that bound their waits themselves). */
export const noDeadline: Deadline = (work) => work(new AbortController().signal);
