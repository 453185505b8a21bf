/** Since when the scheduler has run without a break: a stall longer than the limit starts the run again. */
import { afterEach, expect, it } from 'vitest';
import { RunningSince } from '../../../../src/queue/schedules/running-since.js';

let clock: RunningSince | undefined;
afterEach(() => clock?.stop());

it('keeps its start while the process beats, and starts again after a stall longer than the limit', () => {
  let now = 1_000_000;
  clock = new RunningSince(30_000, () => now);
  const started = new Date(now);
  // Beats a second apart, and one gap just inside the limit: one unbroken run.
  for (let i = 0; i < 5; i++) {
    now += 1_000;
    clock.beat();
  }
  now += 30_000;
  expect(clock.get()).toEqual(started);
  // A gap beyond the limit (the process stopped or suspended): the run starts after it.
  now += 30_001;
  expect(clock.get()).toEqual(new Date(now));
  now += 1_000;
  expect(clock.get()).toEqual(new Date(now - 1_000));
});
