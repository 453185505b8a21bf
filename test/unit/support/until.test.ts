/** The tests' one poll-until helper: what ends a wait, what a timeout says, and that a broken probe fails at once. */
import { describe, expect, it } from 'vitest';
import { until } from '../../support/until.js';

describe('until', () => {
  it('returns the first answer, 0 included, after the probe said "not yet"', async () => {
    const answers: (number | undefined | null | false)[] = [undefined, null, false, 0];
    let calls = 0;
    await expect(until(() => answers[calls++], 1_000, 'a count', 5)).resolves.toBe(0);
    expect(calls).toBe(4);
  });

  it('names what was awaited when the time is up', async () => {
    await expect(until(async () => undefined, 50, 'the worker to come online', 5)).rejects.toThrow(
      'timed out after 50 ms waiting for the worker to come online',
    );
  });

  it('describes the state at the timeout when `what` is a function', async () => {
    let polls = 0;
    const probe = (): undefined => {
      polls++;
      return undefined;
    };
    await expect(until(probe, 50, () => `a screen after ${polls} polls`, 5)).rejects.toThrow(/waiting for a screen after [1-9]\d* polls/);
  });

  it('fails at once with the probe’s own error instead of retrying it', async () => {
    let calls = 0;
    const started = Date.now();
    const failing = async (): Promise<number> => {
      calls++;
      throw new Error('connection refused');
    };
    await expect(until(failing, 5_000, 'never', 5)).rejects.toThrow('connection refused');
    expect(calls).toBe(1);
    expect(Date.now() - started).toBeLessThan(4_000);
  });
});
