/**
 * The browser code of the admin site's own components (components.bundle.js), built with
 * AdminJS's own Rollup + Babel configuration into a writable directory (ADMIN_BUNDLE_DIR,
 * default `.cache/adminjs`), once: a manifest records a fingerprint of the sources, so a process
 * reuses a bundle that an earlier process, `npm run build:admin` or the image build made.
 *
 * Several processes may start at once (test workers, replicas): each builds into files of its
 * own and renames them into place, which is atomic, and the results are identical anyway.
 *
 * With no sources at hand (an image that ships only the prebuilt bundle), the bundle in the
 * directory is used as long as its manifest lists every component; with neither, start-up of
 * the admin site fails with a message saying what to do.
 */
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, readFile, readdir, rename, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join, relative, resolve } from 'node:path';
import { ADMIN_COMPONENTS, COMPONENT_NAMES, componentSourceDir } from './components.js';

export const BUNDLE_FILE = 'components.bundle.js';
const MANIFEST_FILE = 'components.bundle.json';

export interface BundleManifest {
  fingerprint: string;
  components: string[];
  adminjsVersion: string;
  builtAt: string;
}

export interface ReadyBundle {
  file: string;
  /** True when this call built it (false: reused). */
  built: boolean;
}

export function defaultBundleDir(): string {
  return resolve(process.env.ADMIN_BUNDLE_DIR ?? join('.cache', 'adminjs'));
}

/** Browser libraries the components import, which end up inside the bundle. */
const BUNDLED_PACKAGES = ['uplot'];

/** AdminJS's version, from its package.json (not exported, so found next to its entry file). */
function adminjsVersion(): string {
  const require = createRequire(import.meta.url);
  const packageJson = join(dirname(require.resolve('adminjs')), 'package.json');
  return (JSON.parse(readFileSync(packageJson, 'utf8')) as { version: string }).version;
}

/** An installed package's version (its package.json is found next to its main entry file). */
function packageVersion(name: string): string {
  const require = createRequire(import.meta.url);
  let dir = dirname(require.resolve(name));
  while (!existsSync(join(dir, 'package.json')) && dirname(dir) !== dir) dir = dirname(dir);
  return (JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { version: string }).version;
}

/**
 * What the bundle is made from: the components by name, and every file of their directory, the
 * modules they share (in subfolders) included, so that a change to any of them builds anew.
 */
export async function sourcesFingerprint(sourceDir: string, version: string = adminjsVersion()): Promise<string> {
  const hash = createHash('sha256').update(`adminjs ${version}\0node_env ${process.env.NODE_ENV === 'production'}\0`);
  for (const name of BUNDLED_PACKAGES) hash.update(`${name} ${packageVersion(name)}\0`);
  for (const name of COMPONENT_NAMES) hash.update(`${name} ${ADMIN_COMPONENTS[name]}\0`);
  const entries = await readdir(sourceDir, { recursive: true, withFileTypes: true });
  const files = entries
    .filter((entry) => entry.isFile())
    .map((entry) => relative(sourceDir, join(entry.parentPath, entry.name)).split('\\').join('/'))
    .sort();
  for (const file of files) {
    hash
      .update(`${file}\0`)
      .update(await readFile(join(sourceDir, file)))
      .update('\0');
  }
  return hash.digest('hex');
}

async function readManifest(dir: string): Promise<BundleManifest | null> {
  try {
    return JSON.parse(await readFile(join(dir, MANIFEST_FILE), 'utf8')) as BundleManifest;
  } catch {
    return null;
  }
}

/** What AdminJS's entry generator writes: register every component under its name. */
function entrySource(entryDir: string, sourceDir: string): string {
  const lines = ['AdminJS.UserComponents = {}'];
  for (const name of COMPONENT_NAMES) {
    const path = relative(entryDir, join(sourceDir, ADMIN_COMPONENTS[name])).split('\\').join('/');
    lines.push(`import ${name} from '${path.startsWith('.') ? path : `./${path}`}'`, `AdminJS.UserComponents.${name} = ${name}`);
  }
  return `${lines.join('\n')}\n`;
}

async function build(dir: string, sourceDir: string, manifest: BundleManifest): Promise<void> {
  // AdminJS's bundler module reads its settings when first imported; only its Rollup
  // configuration is reused here, with our own entry and output paths.
  const { AssetBundler, componentsBundler } = await import('adminjs/bundler');
  const unique = `${process.pid}-${randomBytes(4).toString('hex')}`;
  const entry = join(dir, `entry-${unique}.js`);
  const output = join(dir, `bundle-${unique}.js`);
  await writeFile(entry, entrySource(dir, sourceDir));
  try {
    const bundler = new AssetBundler(
      { ...componentsBundler.inputOptions, input: entry },
      // No source map: the bundle stays small and holds no absolute paths of the build machine.
      { ...componentsBundler.outputOptions, file: output, sourcemap: false },
    );
    await bundler.build();
    await rename(output, join(dir, BUNDLE_FILE));
    const manifestTmp = join(dir, `manifest-${unique}.json`);
    await writeFile(manifestTmp, `${JSON.stringify(manifest, null, 2)}\n`);
    await rename(manifestTmp, join(dir, MANIFEST_FILE));
  } finally {
    await rm(entry, { force: true });
    await rm(output, { force: true });
  }
}

/** Makes sure `dir` holds a components bundle for the current sources; returns its path. */
export async function ensureComponentsBundle(dir: string = defaultBundleDir()): Promise<ReadyBundle> {
  const file = join(dir, BUNDLE_FILE);
  const existing = await readManifest(dir);
  const sourceDir = componentSourceDir();
  if (sourceDir === null) {
    if (existing !== null && existsSync(file) && COMPONENT_NAMES.every((n) => existing.components.includes(n))) {
      return { file, built: false };
    }
    throw new Error(
      `The admin site's components bundle is missing from ${dir} and its sources are not available to build it. ` +
        'Build it ahead of time (npm run build:admin) or ship src/admin/components with the application.',
    );
  }
  const version = adminjsVersion();
  const wanted = await sourcesFingerprint(sourceDir, version);
  if (existing?.fingerprint === wanted && existsSync(file)) return { file, built: false };
  try {
    await mkdir(dir, { recursive: true });
    await build(dir, sourceDir, {
      fingerprint: wanted,
      components: [...COMPONENT_NAMES],
      adminjsVersion: version,
      builtAt: new Date().toISOString(),
    });
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'EROFS' || code === 'EACCES' || code === 'EPERM') {
      throw new Error(
        `The admin site cannot build its components bundle: ${dir} is not writable (${code}). ` +
          'Point ADMIN_BUNDLE_DIR at a writable volume, or build the bundle at image build time (npm run build:admin).',
        { cause: err },
      );
    }
    throw err;
  }
  return { file, built: true };
}
