/**
 * The service's own browser scripts: the explorer's (src/explorer/browser/) and the browsable
 * API page's (src/render/browser/), each folder type-checked against the DOM library by its
 * tsconfig.json (on tsconfig.browser.json), each script bundled by esbuild into one ES2017
 * script run as is by the page.
 *
 * `npm run build` and the local runtime's build (service-build.ts) write each bundle into dist/
 * beside its source's place (dist/src/explorer/browser/map.js), where a process run from dist/
 * reads it: esbuild, a development dependency, is not needed in production. A process run from
 * the sources (development, tests) bundles them on first use, with one esbuild call for all, and
 * keeps the result in `.cache/browser-scripts/` under a fingerprint of the sources and of
 * esbuild's version, so later processes read it instead of bundling again. Processes that bundle
 * at once each write files of their own and rename them into place, which is atomic; the results
 * are identical anyway.
 *
 * The list below is a build manifest: it names source folders, it imports nothing from them.
 */
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, readdirSync, renameSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Each script's source folder, relative to the repository's root (its source is `<folder>/<name>.ts`). */
const SOURCES = {
  chart: join('src', 'explorer', 'browser'),
  histogram: join('src', 'explorer', 'browser'),
  map: join('src', 'explorer', 'browser'),
  browsable: join('src', 'render', 'browser'),
} as const;

export type BrowserScript = keyof typeof SOURCES;
export const BROWSER_SCRIPTS = Object.keys(SOURCES) as BrowserScript[];

/** The folders of browser sources, relative to the repository's root: not Node modules. */
export const BROWSER_SOURCE_DIRS = [...new Set(Object.values(SOURCES))];

/** The compiler settings every folder's tsconfig.json extends. */
const BASE_TSCONFIG = 'tsconfig.browser.json';

/**
 * The repository's root when run from the sources (src/http/ is two levels down), dist/ when
 * run from the build (dist/src/http/): the sources are under the first, the bundles under the second.
 */
const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const CACHE_DIR = join(ROOT, '.cache', 'browser-scripts');

/** The part of esbuild's API used here (loaded only when bundling: it is not installed in production). */
interface Esbuild {
  version: string;
  buildSync(options: Record<string, unknown>): { outputFiles: { path: string; text: string }[] };
}

const OPTIONS = { bundle: true, format: 'iife', target: 'es2017', minify: true, legalComments: 'none', charset: 'utf8' };

const bundlePath = (root: string, name: BrowserScript): string => join(root, SOURCES[name], `${name}.js`);

/** The bundles by name, made by one esbuild call from the .ts sources under root. */
export function bundleBrowserScripts(root: string = ROOT): Record<BrowserScript, string> {
  const esbuild = createRequire(import.meta.url)('esbuild') as Esbuild;
  // Nothing is written there (write: false); esbuild names each output `<outdir>/<entry name>.js`.
  const outdir = join(root, '.cache', 'browser-scripts-out');
  const result = esbuild.buildSync({
    ...OPTIONS,
    entryPoints: Object.fromEntries(BROWSER_SCRIPTS.map((name) => [name, join(root, SOURCES[name], `${name}.ts`)])),
    outdir,
    write: false,
    logLevel: 'silent',
  });
  const scripts: Partial<Record<BrowserScript, string>> = {};
  for (const file of result.outputFiles) {
    const name = BROWSER_SCRIPTS.find((n) => file.path === join(outdir, `${n}.js`));
    if (name !== undefined) scripts[name] = file.text;
  }
  for (const name of BROWSER_SCRIPTS) if (scripts[name] === undefined) throw new Error(`esbuild wrote no ${name}.js`);
  return scripts as Record<BrowserScript, string>;
}

/** What the bundles are made from: esbuild's version, its options, the shared settings and every source file. */
function fingerprint(root: string, esbuildVersion: string): string {
  const hash = createHash('sha256').update(`esbuild ${esbuildVersion}\0${JSON.stringify(OPTIONS)}\0`);
  hash.update(readFileSync(join(root, BASE_TSCONFIG))).update('\0');
  for (const dir of BROWSER_SOURCE_DIRS) {
    for (const file of readdirSync(join(root, dir)).sort()) {
      if (!file.endsWith('.ts') && !file.endsWith('.json')) continue;
      hash
        .update(`${join(dir, file)}\0`)
        .update(readFileSync(join(root, dir, file)))
        .update('\0');
    }
  }
  return hash.digest('hex').slice(0, 24);
}

/** The bundles written under root (or in one flat dir), if all are there. */
function readBundles(pathOf: (name: BrowserScript) => string): Record<BrowserScript, string> | undefined {
  if (!BROWSER_SCRIPTS.every((name) => existsSync(pathOf(name)))) return undefined;
  return Object.fromEntries(BROWSER_SCRIPTS.map((name) => [name, readFileSync(pathOf(name), 'utf8')])) as Record<BrowserScript, string>;
}

/** Writes a file by a rename of a file of this process's own, so no reader sees half of it. */
function writeWhole(path: string, text: string, suffix: string): void {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(`${path}.${suffix}.tmp`, text);
  renameSync(`${path}.${suffix}.tmp`, path);
}

/** The bundles from the cache directory, made and stored there first when missing. */
function cachedBundles(): Record<BrowserScript, string> {
  const esbuild = createRequire(import.meta.url)('esbuild') as Esbuild;
  const dir = join(CACHE_DIR, fingerprint(ROOT, esbuild.version));
  const cached = readBundles((name) => join(dir, `${name}.js`));
  if (cached !== undefined) return cached;
  const scripts = bundleBrowserScripts(ROOT);
  const suffix = randomBytes(6).toString('hex');
  for (const name of BROWSER_SCRIPTS) writeWhole(join(dir, `${name}.js`), scripts[name], suffix);
  return scripts;
}

/** Writes each bundle under root (a build's dist/) where the built service reads it: `<source folder>/<name>.js`. */
export function writeBundles(root: string, scripts: Record<BrowserScript, string>): void {
  const suffix = randomBytes(6).toString('hex');
  for (const name of BROWSER_SCRIPTS) writeWhole(bundlePath(root, name), scripts[name], suffix);
}

let bundles: Record<BrowserScript, string> | undefined;

/** A script's bundle: the one the build wrote beside its compiled modules, or one made from the sources. */
export function browserScript(name: BrowserScript): string {
  bundles ??= readBundles((script) => bundlePath(ROOT, script)) ?? cachedBundles();
  return bundles[name];
}
