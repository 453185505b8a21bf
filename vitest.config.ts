import { defineConfig } from 'vitest/config';

// Two projects: `unit` (pure logic, no services) and `integration` (real RabbitMQ and a real
// MongoDB-wire server over TLS, started once per run by test/support/global-setup.ts).
export default defineConfig({
  test: {
    // Test files run side by side in this many worker processes (one setting for every project).
    // Vitest's default is one less than the CPUs: a single worker on a two-core machine.
    // TEST_MAX_WORKERS overrides it, to try more files side by side where the machine has room
    // (on a loaded two-core machine three pushed installation tests past their time limits).
    ...(process.env.TEST_MAX_WORKERS ? { maxWorkers: Number(process.env.TEST_MAX_WORKERS) } : {}),
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
          include: ['test/integration/**/*.test.ts'],
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
