/**
 * Scheduler benchmark: N schedules (10,000 by default) firing every minute (`* * * * *`, the worst
 * case: all due at the same second) on one API process's scheduler, for a few minutes. The
 * schedules are written straight into the database; their fires are published to a queue nobody
 * consumes (purged at the end). It reports, from the run log, per minute and overall: fires, how
 * late they were published (p50, p99, max), the fires per second while a minute's burst was being
 * published, and the scheduler process's CPU time as a share of one core over the whole run.
 * Then `celery beat` (PyPI Celery, the .venv of test/support/python-celery.sh) with the same
 * entries (`crontab()`, every minute, to another queue nobody but this benchmark consumes) for
 * the same minutes, its messages' arrival times read off that queue: fires per second in the
 * burst and lateness, beside ours, and the ratio. The machine's load average is printed before
 * and after. Prints numbers and asserts nothing; records them in bench/results/schedules.json.
 * Usage: npm run bench:schedules [-- --schedules 10000 --minutes 2 --skip-beat]
 */
import { parseArgs } from 'node:util';
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import type { Channel } from 'amqplib';
import { loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { mkdtemp, rm } from 'node:fs/promises';
import { ResultsRecorder } from './results.js';
import { startLocalServices } from '../src/local-services/services.js';
import { loadSettings } from '../src/config/settings.js';
import { connectMongo } from '../src/db/mongo-client.js';
import { createLogger } from '../src/log/logger.js';
import { createServiceContext } from '../src/app/service-context.js';
import { connectBroker } from '../src/queue/connection/broker-connection.js';
import type { RunDoc, ScheduleDoc } from '../src/queue/schedules/schedule-store.js';
import type { BurstEvent } from '../src/queue/schedules/scheduler.js';
import { newScheduleDoc } from '../src/queue/schedules/schedule-service.js';
import { benchServiceEnv } from './processes.js';

const { values: args } = parseArgs({
  options: {
    schedules: { type: 'string', default: '10000' },
    minutes: { type: 'string', default: '2' },
    'skip-beat': { type: 'boolean', default: false },
  },
});
const SCHEDULES = Number(args.schedules);
const MINUTES = Number(args.minutes);
const SERVICE_DB = 'bench_schedules';
const QUEUE = 'bench-schedules';
const BEAT_QUEUE = 'bench-schedules-beat';
const OWNER = 'scheduler-bench';

const load = (): string =>
  loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');

/** One minute's burst: how many were published, how late (ms), and at what rate. */
interface Burst {
  published: number;
  lateness: number[];
  seconds: number;
}

const burstOf = (minute: number, publishedAt: number[]): Burst => {
  const lateness = publishedAt.map((t) => Math.max(0, t - minute)).sort((a, b) => a - b);
  return { published: publishedAt.length, lateness, seconds: Math.max(0.001, ((lateness.at(-1) ?? 0) + 0) / 1000) };
};

const rateOf = (bursts: Burst[]): number =>
  bursts.reduce((a, b) => a + b.published, 0) /
  Math.max(
    0.001,
    bursts.reduce((a, b) => a + b.seconds, 0),
  );

const quantile = (sorted: number[], q: number): number => sorted[Math.min(sorted.length - 1, Math.ceil(sorted.length * q) - 1)] ?? NaN;

const line = (b: Burst): string =>
  `${String(b.published).padStart(9)}  ` +
  `${quantile(b.lateness, 0.5)} / ${quantile(b.lateness, 0.99)} / ${b.lateness.at(-1)}`.padEnd(34) +
  `${(b.published / b.seconds).toFixed(0)}`;

/**
 * `celery beat` with the same entries for MINUTES minutes from the next minute boundary at least
 * 20 s away (its start-up with that many entries takes seconds). Its messages' arrival times on
 * BEAT_QUEUE are its publications. Null when Python Celery is not installed.
 */
async function runBeat(env: Record<string, string>, channel: Channel): Promise<{ bursts: Burst[] } | null> {
  const celery = resolve('.venv/bin/celery');
  if (!existsSync(celery)) {
    process.stdout.write('\ncelery beat: skipped, Python Celery is missing (bash test/support/python-celery.sh)\n');
    return null;
  }
  await channel.assertQueue(BEAT_QUEUE, { durable: true });
  await channel.purgeQueue(BEAT_QUEUE);
  const arrivals: number[] = [];
  const { consumerTag } = await channel.consume(BEAT_QUEUE, () => arrivals.push(Date.now()), { noAck: true });
  const dir = await mkdtemp(join(tmpdir(), 'bench-beat-'));
  const { BROKER_URL, ...services } = env;
  const beat = spawn(celery, ['-A', 'beat_bench', 'beat', '--loglevel=WARNING', '-s', join(dir, 'beat-schedule')], {
    cwd: dir,
    stdio: ['ignore', 'inherit', 'inherit'],
    env: {
      PATH: `${resolve('.venv/bin')}:${process.env.PATH ?? ''}`,
      HOME: process.env.HOME ?? '/tmp',
      PYTHONPATH: `${resolve('bench/python')}:${resolve('test/support/celery')}`,
      ...services,
      INTEROP_BROKER_URL: BROKER_URL,
      BEAT_ENTRIES: String(SCHEDULES),
      BEAT_QUEUE,
    },
  });
  const cpuTicks = (): number => {
    try {
      const stat = readFileSync(`/proc/${beat.pid}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      return Number(fields[11]) + Number(fields[12]);
    } catch {
      return NaN;
    }
  };
  const started = Date.now();
  process.stdout.write(`\ncelery beat: ${SCHEDULES} entries, crontab() every minute, for ${MINUTES} minute(s) from its first\n`);
  // Beat fires a new entry first at the next minute after it started: its first message tells which.
  while (arrivals.length === 0 && Date.now() < started + 150_000 && beat.exitCode === null) await new Promise((r) => setTimeout(r, 200));
  const firstMinute = Math.floor((arrivals[0] ?? started) / 60_000) * 60_000;
  const end = firstMinute + MINUTES * 60_000;
  while (Date.now() < end + 30_000 && arrivals.length < SCHEDULES * MINUTES && beat.exitCode === null) {
    await new Promise((r) => setTimeout(r, 5_000));
    process.stdout.write(`  ${new Date().toISOString()}  beat's messages so far: ${arrivals.length}\n`);
  }
  const ticks = cpuTicks();
  const wallMs = Date.now() - started;
  const exited = new Promise((r) => beat.once('exit', r));
  if (beat.exitCode === null) beat.kill('SIGTERM');
  await exited;
  await channel.cancel(consumerTag);
  await rm(dir, { recursive: true, force: true });
  // Beat sends a minute's entries in order and all of them before the next minute's: its n-th
  // message belongs to minute ⌊n / entries⌋. What it had not sent when the run ended is missing.
  process.stdout.write('\nbeat: minute               published  lateness p50 / p99 / max (ms)   fires/s in the burst\n');
  const bursts: Burst[] = [];
  for (let m = 0; m < MINUTES; m++) {
    const at = firstMinute + m * 60_000;
    const burst = burstOf(at, arrivals.slice(m * SCHEDULES, (m + 1) * SCHEDULES));
    bursts.push(burst);
    process.stdout.write(`${new Date(at).toISOString()}  ${line(burst)}\n`);
  }
  // Clock ticks are 1/100 s on Linux.
  process.stdout.write(
    `CPU of celery beat: ${((ticks * 10 * 100) / wallMs).toFixed(1)} % of one core over ${(wallMs / 1000).toFixed(0)} s\n`,
  );
  return { bursts };
}

async function main(): Promise<void> {
  const loadAtStart = load();
  process.stdout.write(`load average (1, 5, 15 min) at the start: ${loadAtStart}\n`);
  process.stdout.write('Starting services (state in .state/bench-schedules)...\n');
  const services = await startLocalServices({ stateDir: '.state/bench-schedules', reuseCertificates: true });
  const env = benchServiceEnv(services.env(), SERVICE_DB, { SCHEDULER_ENABLED: 'false', METRICS_ENABLED: 'false' });
  const settings = loadSettings(env);
  const mongo = await connectMongo(settings.mongo);
  const broker = await connectBroker(settings.broker!);
  const channel = await broker.createChannel();
  try {
    await mongo.db(SERVICE_DB).dropDatabase();
    await channel.assertQueue(QUEUE, { durable: true });
    await channel.purgeQueue(QUEUE);

    // Set up with the scheduler off: the owner, and the schedules written in bulk.
    const setup = await createServiceContext(settings, createLogger('warn'));
    const owner = await setup.auth.users.createUser({ username: OWNER, password: 'bench-password-1', isSuperuser: true });
    await setup.close();
    // The measured part: one API process's service with its scheduler on, started before the
    // schedules are written, so that it runs when their first fire comes however slow the
    // machine is (a fire due before a scheduler started counts as passed while none ran).
    const ctx = await createServiceContext(loadSettings({ ...env, SCHEDULER_ENABLED: 'true' }), createLogger('warn'));
    // When each burst's publishing began and ended: a burst is published ahead of its time (with
    // an eta), so its rate is its fires over that span, not over the span from its due time.
    const burstSpans: BurstEvent[] = [];
    ctx.scheduler?.onBurst((event) => burstSpans.push(event));
    const now = new Date();
    const firstMinute = new Date(Math.ceil((now.getTime() + 25_000) / 60_000) * 60_000);
    const docs: ScheduleDoc[] = Array.from({ length: SCHEDULES }, (_, i) =>
      newScheduleDoc(
        { id: owner.id, name: OWNER },
        {
          name: `bench-${i}`,
          task: 'tasks.noop',
          argsJson: '[]',
          kwargsJson: '{}',
          queue: QUEUE,
          timing: { kind: 'crontab', cron: '* * * * *', tz: 'UTC' },
          intervalAs: null,
          overlap: 'allow',
          catchUpWindowSeconds: 0,
          jitterSeconds: 0,
          startTime: null,
          endTime: new Date(firstMinute.getTime() + MINUTES * 60_000),
          maxRuns: null,
          expiresSeconds: null,
          paused: false,
          note: '',
        },
        now,
        firstMinute,
      ),
    );
    const schedules = mongo.db(SERVICE_DB).collection<ScheduleDoc>('schedules');
    for (let i = 0; i < docs.length; i += 2_000) await schedules.insertMany(docs.slice(i, i + 2_000));
    process.stdout.write(`${SCHEDULES} schedules every minute, from ${firstMinute.toISOString()} for ${MINUTES} minute(s)\n`);
    const cpuFrom = process.cpuUsage();
    const wallFrom = Date.now();
    const end = firstMinute.getTime() + MINUTES * 60_000;
    const runs = mongo.db(SERVICE_DB).collection<RunDoc>('schedule_runs');
    while (Date.now() < end + 30_000) {
      await new Promise((r) => setTimeout(r, 5_000));
      const left = await schedules.countDocuments({ finished: false });
      process.stdout.write(`  ${new Date().toISOString()}  runs so far: ${await runs.estimatedDocumentCount()}  schedules left: ${left}\n`);
      if (left === 0) break;
    }
    const cpu = process.cpuUsage(cpuFrom);
    const wallMs = Date.now() - wallFrom;
    await ctx.close();

    const all = await runs.find({}).toArray();
    process.stdout.write(`\nload average after ours: ${load()}\n`);
    process.stdout.write('\nours: minute               fires  published  lateness p50 / p99 / max (ms)   fires/s in the burst\n');
    const ours: Burst[] = [];
    for (let m = 0; m < MINUTES; m++) {
      const at = firstMinute.getTime() + m * 60_000;
      const minute = all.filter((r) => r.fire_at.getTime() === at);
      const published = minute.filter((r) => r.state === 'published');
      // Lateness as the run log has it (publication minus the fire's due time, none when it was
      // published ahead); the burst lasts from the beginning of its publishing to its end.
      const spans = burstSpans.filter((b) => b.dueAt.getTime() === at);
      const began = Math.min(at, ...spans.map((b) => b.beganAt.getTime()));
      const ended = Math.max(...published.map((r) => r.published_at?.getTime() ?? at), ...spans.map((b) => b.publishedAt.getTime()));
      const burst = {
        published: published.length,
        lateness: published.map((r) => r.lateness_ms ?? NaN).sort((a, b) => a - b),
        seconds: Math.max(0.001, (ended - began) / 1000),
      };
      ours.push(burst);
      process.stdout.write(
        `${new Date(at).toISOString()}  ${String(minute.length).padStart(6)}  ${line(burst)}  (publishing ${began - at} to ${ended - at} ms from the due time)\n`,
      );
    }
    const cpuShare = (cpu.user + cpu.system) / 1000 / wallMs;
    process.stdout.write(
      `\nCPU of this process (scheduler, publishing, the database driver): ${(cpuShare * 100).toFixed(1)} % of one core over ${(wallMs / 1000).toFixed(0)} s\n`,
    );
    const byState = new Map<string, number>();
    for (const r of all) byState.set(r.state, (byState.get(r.state) ?? 0) + 1);
    process.stdout.write(
      `runs: ${all.length} (expected ${SCHEDULES * MINUTES}); by state: ${JSON.stringify(Object.fromEntries(byState))}\n`,
    );
    const other = all.find((r) => r.state !== 'published');
    if (other !== undefined) process.stdout.write(`one not published: ${JSON.stringify(other)}\n`);
    await channel.purgeQueue(QUEUE);

    const beat = args['skip-beat'] ? null : await runBeat(env, channel);
    const ourRate = rateOf(ours);
    const ourP99 = quantile(
      ours.flatMap((b) => b.lateness).sort((a, b) => a - b),
      0.99,
    );
    process.stdout.write(`\nfires/s in the bursts: ours ${ourRate.toFixed(0)}`);
    if (beat !== null)
      process.stdout.write(
        `, celery beat ${rateOf(beat.bursts).toFixed(0)}, ratio ${(ourRate / rateOf(beat.bursts)).toFixed(2)} (goal ≥ 5)`,
      );
    process.stdout.write(`\nload average at the end: ${load()}\n`);

    const recorder = new ResultsRecorder('schedules', 'npm run bench:schedules');
    const published = ours.reduce((a, b) => a + b.published, 0);
    const note = `${SCHEDULES} schedules every minute, ${MINUTES} minute(s), ${published} of ${SCHEDULES * MINUTES} fires published; load average ${loadAtStart} at the start, ${load()} at the end`;
    recorder.add({
      what: `${SCHEDULES} schedules due at once, fires/s in the burst`,
      ours: ourRate,
      unit: 'fires/s',
      ...(beat === null ? {} : { baseline: 'celery beat (PyPI Celery) with the same entries', baselineValue: rateOf(beat.bursts) }),
      goal: '≥ 5',
      note,
    });
    recorder.add({
      what: `${SCHEDULES} schedules every minute, fires published (the rest recorded missed)`,
      ours: (published / (SCHEDULES * MINUTES)) * 100,
      unit: '%',
      goal: '100 %',
      note,
    });
    recorder.add({ what: `${SCHEDULES} schedules due at once, lateness p99`, ours: ourP99 / 1000, unit: 's', goal: '≤ 1 s', note });
    recorder.add({
      what: `${SCHEDULES} schedules every minute, CPU of the API process`,
      ours: cpuShare * 100,
      unit: '% of one core',
      goal: '≤ 10 %',
      note,
    });
    recorder.save();
  } finally {
    await channel.purgeQueue(QUEUE).catch(() => undefined);
    await channel.deleteQueue(BEAT_QUEUE).catch(() => undefined);
    await broker.close().catch(() => undefined);
    await mongo.close();
    await services.stop();
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
