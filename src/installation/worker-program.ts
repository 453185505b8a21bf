/**
 * The worker as two self-contained ES modules for machines without a container engine:
 * worker.mjs (the worker runtime with every dependency bundled in) and tasks.mjs (the task
 * package from worker-image/tasks), built with esbuild. Only Node.js is needed to run them.
 */
import { join } from 'node:path';
import { repositoryRoot } from './layout.js';

/** CommonJS dependencies bundled into ESM call require(); give them a real one. */
const REQUIRE_SHIM =
  "import { createRequire as __cybercomCreateRequire } from 'node:module'; const require = __cybercomCreateRequire(import.meta.url);";

/** Optional native or cloud add-ons of the MongoDB driver: loaded on demand, absent here. */
const OPTIONAL_EXTERNALS = [
  'kerberos',
  'snappy',
  '@mongodb-js/zstd',
  'mongodb-client-encryption',
  '@aws-sdk/credential-providers',
  'gcp-metadata',
  'socks',
  'aws4',
  'pino-pretty',
];

export async function buildWorkerProgram(outDir: string): Promise<{ worker: string; tasks: string }> {
  const esbuild = await import('esbuild');
  const root = repositoryRoot();
  const common = {
    bundle: true,
    platform: 'node' as const,
    format: 'esm' as const,
    target: 'node20',
    banner: { js: REQUIRE_SHIM },
    external: OPTIONAL_EXTERNALS,
    logLevel: 'error' as const,
    legalComments: 'none' as const,
  };
  const worker = join(outDir, 'worker.mjs');
  const tasks = join(outDir, 'tasks.mjs');
  await esbuild.build({ ...common, entryPoints: [join(root, 'src', 'worker', 'main.ts')], outfile: worker });
  await esbuild.build({ ...common, entryPoints: [join(root, 'worker-image', 'tasks', 'index.ts')], outfile: tasks });
  return { worker, tasks };
}
