/**
 * The compiled service that the local runtime runs: every module of src/ and of the bundled
 * task package (worker-image/tasks) transpiled into dist/ (one .js file per .ts file, the same
 * tree the type-checked `npm run build` and the API image make),
 * so a running service loads plain JavaScript: no loader, no compiler, no helper processes.
 *
 * esbuild transpiles file by file, which is what the project's compiler settings already
 * guarantee is safe (isolatedModules, verbatimModuleSyntax); type checking is the lint step's
 * job, not the runtime's. A build takes about a second, so it runs whenever a source file is
 * newer than the last build's stamp: an edited checkout never runs stale code.
 */
import { mkdir, readdir, rename, stat, utimes, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { existsSync } from 'node:fs';
import { BROWSER_SOURCE_DIRS, bundleBrowserScripts, writeBundles } from '../../http/browser-bundle.js';
import { repositoryRoot } from '../layout.js';

/** What a build was made from: the stamp's mtime is the build's time. */
const STAMP = '.service-build';

export interface ServiceBuild {
  /** dist/src/cli.js: the service's entry point. */
  entry: string;
  /** Whether this call compiled (false: the build was already current). */
  built: boolean;
  files: number;
}

/** The source trees compiled, relative to the repository root. */
const SOURCE_DIRS = ['src', join('worker-image', 'tasks')];

/**
 * Scripts for the browser, bundled by esbuild into one classic script each (with their own
 * compiler settings, DOM and no Node): their changes count, but they are not Node modules.
 */
const BROWSER_DIRS = BROWSER_SOURCE_DIRS;

async function sourceFiles(dirs: string[], browserDirs: string[]): Promise<{ files: string[]; newest: number }> {
  const files: string[] = [];
  let newest = 0;
  const walk = async (current: string): Promise<void> => {
    const entries = await readdir(current, { withFileTypes: true }).catch((err: NodeJS.ErrnoException) => {
      if (err.code === 'ENOENT') return [];
      throw err;
    });
    for (const entry of entries) {
      const path = join(current, entry.name);
      if (entry.isDirectory()) await walk(path);
      else if (entry.isFile()) {
        // The admin site's .tsx components stay sources: AdminJS bundles them itself.
        const forNode = !browserDirs.includes(current);
        if (forNode && entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts')) files.push(path);
        newest = Math.max(newest, (await stat(path)).mtimeMs);
      }
    }
  };
  for (const dir of dirs) await walk(dir);
  return { files, newest };
}

async function stampTime(file: string): Promise<number | undefined> {
  return stat(file).then(
    (s) => s.mtimeMs,
    () => undefined,
  );
}

/**
 * Compiles the sources into dist/ unless the last build is newer than every source file (and than
 * package-lock.json: a dependency upgrade can change what the output should import).
 */
export async function ensureServiceBuild(root = repositoryRoot()): Promise<ServiceBuild> {
  const startedAt = new Date();
  const outDir = join(root, 'dist');
  const stamp = join(outDir, STAMP);
  const entry = join(outDir, 'src', 'cli.js');
  const browserDirs = BROWSER_DIRS.map((dir) => join(root, dir));
  const { files, newest } = await sourceFiles(
    SOURCE_DIRS.map((dir) => join(root, dir)),
    browserDirs,
  );
  const lock = (await stampTime(join(root, 'package-lock.json'))) ?? 0;
  const built = await stampTime(stamp);
  const entryPresent = (await stampTime(entry)) !== undefined;
  if (built !== undefined && entryPresent && built >= Math.max(newest, lock)) return { entry, built: false, files: files.length };

  const esbuild = await import('esbuild');
  const result = await esbuild.build({
    entryPoints: files,
    outdir: outDir,
    outbase: root,
    bundle: false,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    sourcemap: true,
    logLevel: 'error',
    write: false,
  });
  // Each file is replaced whole (written beside it, then renamed over it): a service starting
  // while another process builds the same sources never loads a half-written module.
  for (const file of result.outputFiles) {
    await mkdir(dirname(file.path), { recursive: true });
    const partial = `${file.path}.${process.pid}.partial`;
    await writeFile(partial, file.contents);
    await rename(partial, file.path);
  }
  if (browserDirs.every((dir) => existsSync(dir))) writeBundles(outDir, bundleBrowserScripts(root));
  await writeFile(stamp, `${files.length} modules from ${SOURCE_DIRS.map((dir) => `${dir}/`).join(' ')}\n`);
  // Dated when the sources were read: a file saved during the build makes the next call build again.
  await utimes(stamp, startedAt, startedAt);
  return { entry, built: true, files: files.length };
}
