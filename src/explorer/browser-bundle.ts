/**
 * The explorer's own browser scripts (browser/*.ts, type-checked against the DOM library by
 * browser/tsconfig.json), each bundled by esbuild into one ES2017 script run as is by the page.
 *
 * `npm run build` and the local runtime's build (service-build.ts) write the bundles next to the
 * compiled module (dist/src/explorer/browser/), and a process run from dist/ reads them there: esbuild, a development dependency, is not
 * needed in production. A process run from the sources (development, tests) bundles them on
 * first use, with one esbuild call for all, and keeps the result in `.cache/explorer-browser/`
 * under a fingerprint of the sources and of esbuild's version, so later processes read it
 * instead of bundling again. Processes that bundle at once each write files of their own and
 * rename them into place, which is atomic; the results are identical anyway.
 */
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, readdirSync, renameSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const BROWSER_SCRIPTS = ['chart', 'histogram', 'map'] as const;
export type BrowserScript = (typeof BROWSER_SCRIPTS)[number];

/** The sources' directory, relative to the repository's root. */
export const BROWSER_SOURCE_DIR = join('src', 'explorer', 'browser');

/** Where the sources are when run from src/, and where the builds put the bundles in dist/. */
const HERE = fileURLToPath(new URL('./browser/', import.meta.url));
const CACHE_DIR = fileURLToPath(new URL('../../.cache/explorer-browser/', import.meta.url));

/** The part of esbuild's API used here (loaded only when bundling: it is not installed in production). */
interface Esbuild {
  version: string;
  buildSync(options: Record<string, unknown>): { outputFiles: { path: string; text: string }[] };
}

const OPTIONS = { bundle: true, format: 'iife', target: 'es2017', minify: true, legalComments: 'none', charset: 'utf8' };

/** The bundles by name, made by one esbuild call from the .ts sources in sourceDir. */
export function bundleBrowserScripts(sourceDir: string = HERE): Record<BrowserScript, string> {
  const esbuild = createRequire(import.meta.url)('esbuild') as Esbuild;
  const result = esbuild.buildSync({
    ...OPTIONS,
    entryPoints: BROWSER_SCRIPTS.map((name) => join(sourceDir, `${name}.ts`)),
    outdir: join(sourceDir, 'out'),
    write: false,
    logLevel: 'silent',
  });
  const scripts: Partial<Record<BrowserScript, string>> = {};
  for (const file of result.outputFiles) {
    const name = BROWSER_SCRIPTS.find((n) => file.path.endsWith(`${n}.js`));
    if (name !== undefined) scripts[name] = file.text;
  }
  for (const name of BROWSER_SCRIPTS) if (scripts[name] === undefined) throw new Error(`esbuild wrote no ${name}.js`);
  return scripts as Record<BrowserScript, string>;
}

/** What the bundles are made from: esbuild's version, its options and every source file. */
function fingerprint(sourceDir: string, esbuildVersion: string): string {
  const hash = createHash('sha256').update(`esbuild ${esbuildVersion}\0${JSON.stringify(OPTIONS)}\0`);
  for (const file of readdirSync(sourceDir).sort()) {
    if (!file.endsWith('.ts') && !file.endsWith('.json')) continue;
    hash
      .update(`${file}\0`)
      .update(readFileSync(join(sourceDir, file)))
      .update('\0');
  }
  return hash.digest('hex').slice(0, 24);
}

/** The bundles written in dir, if all are there. */
function readBundles(dir: string): Record<BrowserScript, string> | undefined {
  if (!BROWSER_SCRIPTS.every((name) => existsSync(join(dir, `${name}.js`)))) return undefined;
  return Object.fromEntries(BROWSER_SCRIPTS.map((name) => [name, readFileSync(join(dir, `${name}.js`), 'utf8')])) as Record<
    BrowserScript,
    string
  >;
}

/** The bundles from the cache directory, made and stored there first when missing. */
function cachedBundles(): Record<BrowserScript, string> {
  const esbuild = createRequire(import.meta.url)('esbuild') as Esbuild;
  const dir = join(CACHE_DIR, fingerprint(HERE, esbuild.version));
  const cached = readBundles(dir);
  if (cached !== undefined) return cached;
  const scripts = bundleBrowserScripts(HERE);
  writeBundles(dir, scripts);
  return scripts;
}

/** Writes each bundle as `<name>.js` in dir, each by a rename of a file of this process's own. */
export function writeBundles(dir: string, scripts: Record<BrowserScript, string>): void {
  mkdirSync(dir, { recursive: true });
  const suffix = randomBytes(6).toString('hex');
  for (const name of BROWSER_SCRIPTS) {
    const target = join(dir, `${name}.js`);
    writeFileSync(`${target}.${suffix}.tmp`, scripts[name]);
    renameSync(`${target}.${suffix}.tmp`, target);
  }
}

let bundles: Record<BrowserScript, string> | undefined;

/** A script's bundle: the one the build wrote beside this module, or one made from the sources. */
export function browserScript(name: BrowserScript): string {
  bundles ??= readBundles(HERE) ?? cachedBundles();
  return bundles[name];
}
