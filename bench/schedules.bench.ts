/**
 * Scheduler benchmark: N schedules (10,000 by default) firing every minute (`* * * * *`, the worst
 * case: all due at the same second) on one API process's scheduler, for a few minutes. The
 * schedules are written straight into the database; their fires are published to a queue nobody
 * consumes (purged at the end). It reports, from the run log, per minute and overall: fires, how
 * late they were published (p50, p99, max), the fires per second while a minute's burst was being
 * published, and the scheduler process's CPU time as a share of one core over the whole run.
 * Prints numbers and asserts nothing.
 * Usage: npm run bench:schedules [-- --schedules 10000 --minutes 2]
 */
import { parseArgs } from 'node:util';
import { startLocalServices } from '../src/local-services/services.js';
import { loadSettings } from '../src/config/settings.js';
import { connectMongo } from '../src/db/mongo-client.js';
import { createLogger } from '../src/log/logger.js';
import { createServiceContext } from '../src/app/service-context.js';
import { connectBroker } from '../src/queue/connection/broker-connection.js';
import type { RunDoc, ScheduleDoc } from '../src/queue/schedules/schedule-store.js';
import { newScheduleDoc } from '../src/queue/schedules/schedule-service.js';
import { benchServiceEnv } from './processes.js';

const { values: args } = parseArgs({
  options: {
    schedules: { type: 'string', default: '10000' },
    minutes: { type: 'string', default: '2' },
  },
});
const SCHEDULES = Number(args.schedules);
const MINUTES = Number(args.minutes);
const SERVICE_DB = 'bench_schedules';
const QUEUE = 'bench-schedules';
const OWNER = 'scheduler-bench';

const quantile = (sorted: number[], q: number): number => sorted[Math.min(sorted.length - 1, Math.ceil(sorted.length * q) - 1)] ?? NaN;

async function main(): Promise<void> {
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
    const now = new Date();
    const firstMinute = new Date(Math.ceil((now.getTime() + 20_000) / 60_000) * 60_000);
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
    await setup.close();
    process.stdout.write(`${SCHEDULES} schedules every minute, from ${firstMinute.toISOString()} for ${MINUTES} minute(s)\n`);

    // The measured part: one API process's service with its scheduler on.
    const ctx = await createServiceContext(loadSettings({ ...env, SCHEDULER_ENABLED: 'true' }), createLogger('warn'));
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
    process.stdout.write('\nminute                     fires  published  lateness p50 / p99 / max (ms)   fires/s in the burst\n');
    for (let m = 0; m < MINUTES; m++) {
      const at = firstMinute.getTime() + m * 60_000;
      const minute = all.filter((r) => r.fire_at.getTime() === at);
      const published = minute.filter((r) => r.state === 'published');
      const lateness = published.map((r) => r.lateness_ms ?? NaN).sort((a, b) => a - b);
      const lastPublished = Math.max(...published.map((r) => r.published_at?.getTime() ?? 0));
      const burstS = Math.max(0.001, (lastPublished - at) / 1000);
      process.stdout.write(
        `${new Date(at).toISOString()}  ${String(minute.length).padStart(6)}  ${String(published.length).padStart(9)}  ` +
          `${quantile(lateness, 0.5)} / ${quantile(lateness, 0.99)} / ${lateness.at(-1)}`.padEnd(34) +
          `${(published.length / burstS).toFixed(0)}\n`,
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
  } finally {
    await channel.purgeQueue(QUEUE).catch(() => undefined);
    await broker.close().catch(() => undefined);
    await mongo.close();
    await services.stop();
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
