import { configDefaults, defineConfig } from 'vitest/config';
import LongestFirstSequencer from './test/support/longest-first.js';

/**
 * Test files that install and start a whole installation of their own (PostgreSQL, FerretDB and,
 * for most, RabbitMQ, each start taking tens of seconds) or kill and restart such engines again
 * and again (engine-kill-answers starts two engines of its own and kills them 22 times). They make the `installations` project, which `npm test` runs one file at a time in a
 * vitest process of its own, beside the other projects: two of them side by side on a two-core
 * machine pushed their start-ups past their time limits (three files side by side on a loaded
 * two-core machine did).
 */
const INSTALLATION_TESTS = [
  'test/integration/installer/private-store.test.ts',
  'test/integration/installer/upgrade-from-v1.test.ts',
  'test/integration/installer/install-local.test.ts',
  'test/integration/installer/install-local-https.test.ts',
  'test/integration/ops/certificates.test.ts',
  'test/integration/ops/backup-restore.test.ts',
  'test/integration/ops/worker-bundle.test.ts',
  'test/integration/installation/runner/engine-crash-restart.test.ts',
  'test/integration/app/engine-kill-answers.test.ts',
];

/**
 * Integration files that spend most of their time waiting on the clock (schedules firing every
 * second across several API processes, a scheduler's idle look, lateness windows) rather than on
 * the CPU. `npm test` runs them in a vitest process of their own, one at a time, beside the other
 * two (test/support/test-groups.sh): in the main process they held one of its two workers for
 * about 340 s of waiting. TEST_CLOCK_BOUND=exclude leaves them out of `integration`, =only makes
 * `integration` just them; unset, `integration` holds them like any other file.
 */
const CLOCK_BOUND_TESTS = ['test/integration/queue/schedules-processes.test.ts', 'test/integration/queue/schedules-api.test.ts'];
const clockBound = process.env.TEST_CLOCK_BOUND;

// Projects: `unit` (pure logic, no services), `integration` and `e2e` (real RabbitMQ and a real
// MongoDB-wire server over TLS, started once per vitest process by test/support/global-setup.ts)
// and `installations` (see above). `npm test` starts three vitest processes at once (see
// test/support/test-groups.sh): one for `installations` with a single worker, one for the
// clock-bound integration files with a single worker, one for everything else.
export default defineConfig({
  test: {
    // Test files run side by side in this many worker processes, two by default (TEST_MAX_WORKERS
    // overrides it; vitest has one worker count per run, so `unit` uses it too, which on two
    // cores is all of them). The files of `integration` and `e2e` share one broker and one
    // engine, but never meet on them: each worker has a broker vhost of its own (its queues,
    // remote control and task events) and a database prefix of its own (see
    // test/support/services.ts). The `installations` files bring their own services, so their
    // process runs beside this one.
    maxWorkers: Number(process.env.TEST_MAX_WORKERS ?? 2),
    // Longest files first, from a record of a whole run's file times (see test/support/longest-first.ts).
    sequence: { sequencer: LongestFirstSequencer },
    projects: [
      {
        test: {
          name: 'unit',
          include: ['test/unit/**/*.test.ts'],
          testTimeout: 20_000,
        },
      },
      {
        test: {
          name: 'integration',
          include: clockBound === 'only' ? CLOCK_BOUND_TESTS : ['test/integration/**/*.test.ts'],
          exclude: [...configDefaults.exclude, ...INSTALLATION_TESTS, ...(clockBound === 'exclude' ? CLOCK_BOUND_TESTS : [])],
          globalSetup: ['test/support/global-setup.ts'],
          testTimeout: 60_000,
          hookTimeout: 120_000,
        },
      },
      {
        test: {
          name: 'installations',
          include: INSTALLATION_TESTS,
          globalSetup: ['test/support/global-setup.ts'],
          testTimeout: 60_000,
          hookTimeout: 120_000,
        },
      },
      {
        // Browser tests: Debian's chromium driven by playwright-core (installed by prepare-env.sh).
        test: {
          name: 'e2e',
          include: ['test/e2e/**/*.test.ts'],
          globalSetup: ['test/support/global-setup.ts'],
          testTimeout: 120_000,
          hookTimeout: 120_000,
        },
      },
      // A three-node RabbitMQ cluster and broker failover: slow, so only with `npm run
      // test:cluster` (which sets TEST_CLUSTER=1), never part of `npm test`.
      ...(process.env.TEST_CLUSTER === '1'
        ? [
            {
              test: {
                name: 'cluster',
                include: ['test/cluster/**/*.test.ts'],
                globalSetup: ['test/cluster/global-setup.ts'],
                testTimeout: 420_000,
                hookTimeout: 240_000,
              },
            },
          ]
        : []),
    ],
  },
});
