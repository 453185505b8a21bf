import { vi } from 'vitest';

type Absent = undefined | null | false;

/**
 * Polls `probe` every `intervalMs` until it returns a value (anything but undefined, null or
 * false: 0 and '' count as answers) and returns that value. Past `timeoutMs` it fails with a
 * message naming what was awaited, so a red test says which condition never came. An error
 * thrown by the probe fails at once rather than being retried: a broken probe is not a
 * condition that has not come yet. `what` may be a function, for a message that shows the state
 * at the timeout (a screen, a log) rather than at the start.
 *
 * The polling is vitest's own `vi.waitUntil` (safe with fake timers); the probe's answer travels
 * boxed so that falsy answers such as 0 still end the wait.
 */
export async function until<T>(
  probe: () => Promise<T | Absent> | T | Absent,
  timeoutMs: number,
  what: string | (() => string),
  intervalMs = 100,
): Promise<T> {
  let probeError: { error: unknown } | undefined;
  try {
    const answer = await vi.waitUntil(
      async () => {
        let value: T | Absent;
        try {
          value = await probe();
        } catch (error) {
          probeError = { error };
          throw error;
        }
        return value === undefined || value === null || value === false ? false : { value };
      },
      { timeout: timeoutMs, interval: intervalMs },
    );
    return answer.value;
  } catch (error) {
    if (probeError) throw probeError.error;
    const awaited = typeof what === 'function' ? what() : what;
    throw new Error(`timed out after ${timeoutMs} ms waiting for ${awaited}`, { cause: error });
  }
}

/**
 * `promise`, or a failure "still waiting after `ms` ms" when it has not settled by then: a test of
 * something that must not hang fails on the hang itself, with that message, not on its time limit.
 */
export function settledWithin<T>(promise: Promise<T>, ms = 2_000): Promise<T> {
  return Promise.race([
    promise,
    new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`still waiting after ${ms} ms`)), ms)),
  ]);
}
