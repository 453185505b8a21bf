/** A schedule's input rules, its four kinds of timing, what the scheduler does with a due fire, and which expired claims its sweep finishes. */
import { describe, expect, it } from 'vitest';
import { ApiError } from '../../../../src/errors.js';
import { bodyOf, mergeUpdate, parseScheduleBody, type ValidationContext } from '../../../../src/queue/schedules/model.js';
import { nextFire, nextFires, type Timing } from '../../../../src/queue/schedules/timing.js';
import { planDue } from '../../../../src/queue/schedules/plan.js';
import { abandoned } from '../../../../src/queue/schedules/scheduler.js';
import type { RunDoc, ScheduleDoc } from '../../../../src/queue/schedules/schedule-store.js';
import { parseExactJson, type ExactJsonObject, type ExactJsonValue } from '../../../../src/queue/protocol/exact-numbers.js';

const NOW = new Date('2026-06-01T12:00:00Z');
const ctx: ValidationContext = { now: NOW, minIntervalSeconds: 10, defaultAnchor: NOW };
const base = { name: 'nightly', task: 'tasks.harvest' };

function refusal(body: unknown): { status: number; code: string; message: string } {
  try {
    parseScheduleBody(body, ctx);
  } catch (error) {
    if (error instanceof ApiError) return { status: error.status, code: error.code, message: error.message };
    throw error;
  }
  throw new Error('accepted');
}

describe('schedule input', () => {
  it.each([
    ['an invalid crontab', { ...base, crontab: '61 * * * *' }, 'invalid_crontab', /minute/],
    ['a crontab with six fields', { ...base, crontab: '0 0 2 * * *' }, 'invalid_crontab', /five fields|5 parts/],
    ['an unknown time zone', { ...base, crontab: '0 2 * * *', timezone: 'Mars/Olympus' }, 'unknown_timezone', /Mars\/Olympus/],
    ['an interval below the minimum', { ...base, interval: { every: 5, period: 'seconds' } }, 'interval_too_short', /10 s/],
    ['an interval with an unknown period', { ...base, interval: { every: 5, period: 'weeks' } }, 'invalid_interval', /period/],
    ['a fractional interval', { ...base, interval: { every: 10.5 } }, 'invalid_interval', /whole/],
    ['no timing', base, 'invalid_timing', /exactly one/],
    ['two timings', { ...base, crontab: '0 2 * * *', interval: { every: 60 } }, 'invalid_timing', /crontab, interval/],
    ['sunrise in the polar night', { ...base, solar: { event: 'sunrise', latitude: 80, longitude: 15 } }, 'no_solar_event', /polar/],
    ['a latitude beyond the pole', { ...base, solar: { event: 'sunrise', latitude: 91, longitude: 0 } }, 'invalid_solar', /latitude/],
    ['an unknown solar event', { ...base, solar: { event: 'moonrise', latitude: 1, longitude: 0 } }, 'invalid_solar', /event/],
    ['a clocked time without an offset', { ...base, clocked: '2026-07-01T02:00:00' }, 'invalid_clocked', /offset/],
    ['a clocked time in the past', { ...base, clocked: '2026-05-01T02:00:00Z' }, 'invalid_clocked', /past/],
    ['an unknown overlap policy', { ...base, crontab: '* * * * *', overlap: 'queue_all' }, 'invalid_overlap', /buffer_one/],
    ['a jitter as long as the interval', { ...base, interval: { every: 60 }, jitter: 60 }, 'invalid_jitter', /shorter/],
    [
      'an end before the start',
      { ...base, crontab: '* * * * *', start_time: '2026-07-01T00:00:00Z', end_time: '2026-06-01T00:00:00Z' },
      'invalid_end_time',
      /after/,
    ],
    ['max_runs of zero', { ...base, crontab: '* * * * *', max_runs: 0 }, 'invalid_max_runs', /at least 1/],
    ['a timezone with an interval', { ...base, interval: { every: 60 }, timezone: 'UTC' }, 'invalid_timezone', /crontab/],
    ['a bad task name', { ...base, task: 'no spaces', crontab: '* * * * *' }, 'invalid_task_name', /dotted/],
    ['args that are not a list', { ...base, crontab: '* * * * *', args: { a: 1 } }, 'invalid_args', /array/],
    ['an unknown field', { ...base, crontab: '* * * * *', every: 3 }, 'unknown_field', /every/],
    ['an empty name', { ...base, name: ' ', crontab: '* * * * *' }, 'invalid_name', /name/],
  ])('refuses %s with a 400', (_what, body, code, message) => {
    const r = refusal(body);
    expect(r.status).toBe(400);
    expect(r.code).toBe(code);
    expect(r.message).toMatch(message);
  });

  it('accepts each kind and gives the body back as it was written', () => {
    // As texts: the literals 3.0 and 12345678901234567890 must reach the stored arguments as written.
    const bodies = [
      '{"name":"n","task":"tasks.harvest","crontab":"0  2 * * *","timezone":"America/Chicago","kwargs":{"site":"lake","depth":3.0},"overlap":"skip"}',
      '{"name":"n","task":"tasks.harvest","interval":{"every":15,"period":"minutes","anchor":"2026-06-01T00:00:00Z"},"catch_up_window":600,"jitter":5}',
      '{"name":"n","task":"tasks.harvest","solar":{"event":"sunrise","latitude":46.8,"longitude":-89.5},"expires":3600}',
      '{"name":"n","task":"tasks.harvest","clocked":"2026-06-02T09:00:00Z","args":[12345678901234567890,1.0]}',
    ];
    for (const text of bodies) {
      const spec = parseScheduleBody(parseExactJson(text), ctx);
      const again = bodyOf(spec, parseExactJson(spec.argsJson) as ExactJsonValue[], parseExactJson(spec.kwargsJson) as ExactJsonObject);
      expect(parseScheduleBody(again, ctx)).toEqual(spec);
    }
    expect(parseScheduleBody(parseExactJson(bodies[3]!), ctx).argsJson).toBe('[12345678901234567890,1.0]');
    expect(parseScheduleBody(parseExactJson(bodies[0]!), ctx).timing).toEqual({
      kind: 'crontab',
      cron: '0 2 * * *',
      tz: 'America/Chicago',
    });
  });

  it('reads numbers written with a fraction (60.0, as Python writes floats) in every numeric field', () => {
    // The queue's endpoints keep such literals exact (for the task's arguments); here they are numbers.
    const spec = parseScheduleBody(
      parseExactJson(
        '{"name":"n","task":"tasks.add","interval":{"every":900.0},"catch_up_window":60.0,"jitter":1.0,"max_runs":3,"expires":10.0}',
      ),
      ctx,
    );
    expect(spec).toMatchObject({ catchUpWindowSeconds: 60, jitterSeconds: 1, expiresSeconds: 10, maxRuns: 3 });
    expect(spec.timing).toMatchObject({ kind: 'interval', everySeconds: 900 });
    const solar = parseScheduleBody(
      parseExactJson('{"name":"n","task":"tasks.add","solar":{"event":"sunrise","latitude":46.0,"longitude":-89.0}}'),
      ctx,
    );
    expect(solar.timing).toMatchObject({ lat: 46, lon: -89 });
  });

  it('keeps 3.0 a float in the stored arguments', () => {
    const spec = parseScheduleBody(parseExactJson('{"name":"n","task":"tasks.add","args":[3.0,1],"crontab":"* * * * *"}'), ctx);
    expect(spec.argsJson).toBe('[3.0,1]');
  });

  it('an update given another kind of timing replaces the old one', () => {
    const current = bodyOf(parseScheduleBody({ ...base, crontab: '0 2 * * *', timezone: 'Europe/Berlin' }, ctx), [], {});
    const merged = mergeUpdate(current, { interval: { every: 30 } });
    expect(merged.crontab).toBeUndefined();
    expect(merged.timezone).toBeUndefined();
    expect(parseScheduleBody(merged, ctx).timing.kind).toBe('interval');
  });
});

describe('fire times', () => {
  it('an interval is anchored: the grid stays where the anchor put it', () => {
    const timing: Timing = { kind: 'interval', everySeconds: 60, anchor: new Date('2026-06-01T00:00:30Z') };
    expect(nextFire(timing, new Date('2026-06-01T12:00:00Z'))?.toISOString()).toBe('2026-06-01T12:00:30.000Z');
    expect(nextFire(timing, new Date('2026-06-01T12:00:30Z'))?.toISOString()).toBe('2026-06-01T12:01:30.000Z');
    expect(nextFire(timing, new Date('2026-05-01T00:00:00Z'))?.toISOString()).toBe('2026-06-01T00:00:30.000Z');
  });

  it('start and end bound every kind; a clocked schedule fires once', () => {
    const timing: Timing = { kind: 'interval', everySeconds: 3600, anchor: new Date('2026-06-01T00:00:00Z') };
    const window = { start: new Date('2026-06-01T05:00:00Z'), end: new Date('2026-06-01T08:00:00Z') };
    expect(nextFires(timing, new Date('2026-06-01T00:00:00Z'), 10, window).map((d) => d.toISOString())).toEqual([
      '2026-06-01T05:00:00.000Z',
      '2026-06-01T06:00:00.000Z',
      '2026-06-01T07:00:00.000Z',
    ]);
    const once: Timing = { kind: 'clocked', at: new Date('2026-06-02T00:00:00Z') };
    expect(nextFires(once, NOW, 10)).toEqual([new Date('2026-06-02T00:00:00Z')]);
  });

  it('sunrise comes once a day, and a day without one is passed over', () => {
    const timing: Timing = { kind: 'solar', event: 'sunrise', lat: 46.8, lon: -89.5 };
    const fires = nextFires(timing, NOW, 5);
    for (let i = 1; i < fires.length; i++) {
      const gap = fires[i]!.getTime() - fires[i - 1]!.getTime();
      expect(gap).toBeGreaterThan(23 * 3600_000);
      expect(gap).toBeLessThan(25 * 3600_000);
    }
    // At 80° N the sun does not set between late April and late August: the next sunset is in August.
    const arctic = nextFire({ kind: 'solar', event: 'sunset', lat: 80, lon: 15 }, NOW);
    expect(arctic?.toISOString().slice(0, 7)).toBe('2026-08');
  });
});

describe('a due fire', () => {
  const every10s: Timing = { kind: 'interval', everySeconds: 10, anchor: new Date('2026-06-01T00:00:00Z') };
  const at = (s: string) => new Date(`2026-06-01T${s}Z`);
  // A scheduler that started after the fires looked at: late ones passed while none ran.
  const options = { graceMs: 5_000, catchUpWindowMs: 0, runningSince: null };

  it('fires on time, and one late within the grace fires too, without merging', () => {
    expect(planDue(every10s, {}, at('12:00:00'), at('12:00:00.300'), options)).toEqual({
      kind: 'fire',
      fire: at('12:00:00'),
      catchUp: false,
      covers: 1,
      missed: null,
      next: at('12:00:10'),
    });
    const late = planDue(every10s, {}, at('12:00:00'), at('12:00:04'), options);
    expect(late.kind === 'fire' && !late.catchUp).toBe(true);
  });

  it('after downtime without a catch-up window, the passed fires are missed and the next one is the first to come', () => {
    expect(planDue(every10s, {}, at('12:00:00'), at('12:01:02'), options)).toEqual({
      kind: 'missed',
      missed: { first: at('12:00:00'), count: 6, atLeast: false },
      next: at('12:01:00'),
    });
  });

  it('with a catch-up window, the fires inside it make one catch-up run; older ones are missed', () => {
    expect(planDue(every10s, {}, at('12:00:00'), at('12:01:07'), { ...options, catchUpWindowMs: 30_000 })).toEqual({
      kind: 'fire',
      fire: at('12:01:00'),
      catchUp: true,
      covers: 3,
      missed: { first: at('12:00:00'), count: 4, atLeast: false },
      next: at('12:01:10'),
    });
  });

  it('a fire that came due while the scheduler ran fires however late, one run per fire (it was slow, not down)', () => {
    const running = { ...options, runningSince: at('11:59:00') };
    // 12 s late, past the 5 s grace, no catch-up window: late, not missed.
    expect(planDue(every10s, {}, at('12:00:00'), at('12:00:12'), running)).toEqual({
      kind: 'fire',
      fire: at('12:00:00'),
      catchUp: false,
      covers: 1,
      missed: null,
      next: at('12:00:10'),
    });
    // So far behind that the next fire passed too: each fires in turn, none merged into a catch-up.
    const behind = planDue(every10s, {}, at('12:00:00'), at('12:00:35'), { ...running, catchUpWindowMs: 60_000 });
    expect(behind).toMatchObject({ kind: 'fire', fire: at('12:00:00'), catchUp: false, covers: 1, missed: null });
    expect(planDue(every10s, {}, at('12:00:10'), at('12:00:35'), running)).toMatchObject({ kind: 'fire', fire: at('12:00:10') });
  });

  it('fires that passed before the scheduler started are downtime; those after it fire late', () => {
    const restarted = { ...options, runningSince: at('12:00:25') };
    // 12:00:00–12:00:20 passed while none ran: missed; 12:00:30 came due after the start: fires, late.
    expect(planDue(every10s, {}, at('12:00:00'), at('12:00:40'), restarted)).toEqual({
      kind: 'missed',
      missed: { first: at('12:00:00'), count: 3, atLeast: false },
      next: at('12:00:30'),
    });
    expect(planDue(every10s, {}, at('12:00:30'), at('12:00:40'), restarted)).toMatchObject({
      kind: 'fire',
      fire: at('12:00:30'),
      catchUp: false,
    });
    // With a catch-up window the downtime's fires inside it make one catch-up run, at the last before the start.
    expect(planDue(every10s, {}, at('12:00:00'), at('12:00:40'), { ...restarted, catchUpWindowMs: 25_000 })).toEqual({
      kind: 'fire',
      fire: at('12:00:20'),
      catchUp: true,
      covers: 1,
      missed: { first: at('12:00:00'), count: 2, atLeast: false },
      next: at('12:00:30'),
    });
  });

  it('counts at most so many missed fires after a very long downtime', () => {
    const step = planDue({ kind: 'interval', everySeconds: 1, anchor: at('00:00:00') }, {}, at('00:00:00'), at('12:00:00'), options);
    expect(step.kind).toBe('missed');
    expect(step.missed).toMatchObject({ count: 10_000, atLeast: true });
    expect(step.next).toEqual(at('11:59:55'));
  });
});

describe('which expired claims the sweep finishes (no process will)', () => {
  const fire = new Date('2026-06-01T12:00:00Z');
  const later = new Date('2026-06-01T12:01:00Z');
  const claim = (over: Partial<RunDoc> = {}): RunDoc => ({
    _id: `s1@${fire.toISOString()}`,
    schedule_id: 's1',
    kind: 'scheduled',
    fire_at: fire,
    state: 'claimed',
    task_id: 't1',
    claimed_by: 'a-stopped-process',
    claimed_at: fire,
    lease_until: fire,
    published_at: null,
    lateness_ms: null,
    reason: null,
    count: 1,
    recovered: false,
    ...over,
  });
  const schedule = (over: Partial<ScheduleDoc>) => ({ paused: false, next_fire_at: fire, buffered_run: null, ...over }) as ScheduleDoc;

  it.each([
    ['its schedule deleted', claim(), undefined, true],
    ['its schedule paused', claim(), schedule({ paused: true }), true],
    ['its schedule moved past it (changed)', claim(), schedule({ next_fire_at: later }), true],
    ['its schedule finished', claim(), schedule({ next_fire_at: null }), true],
    ['a "run now"', claim({ kind: 'manual' }), schedule({}), true],
    ['its schedule still at its fire: taken over instead', claim(), schedule({}), false],
    ['a catch-up past the next fire: taken over instead', claim({ kind: 'catch_up', fire_at: later }), schedule({}), false],
    ['the buffered run of a paused schedule: released on resume', claim(), schedule({ paused: true, buffered_run: claim()._id }), false],
    ['a buffered run being released', claim(), schedule({ next_fire_at: later, buffered_run: claim()._id }), false],
  ])('%s → %s', (_what, run, s, swept) => {
    expect(abandoned(run, s)).toBe(swept);
  });
});
