/**
 * The admin site's build and page plumbing, without a server: the components bundle is built
 * once and reused by fingerprint (also by processes racing to build it), and AdminJS's page
 * shell is hardened (state escaped for the script element, nothing external, script nonces).
 */
import { appendFile, cp, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { BUNDLE_FILE, ensureComponentsBundle, sourcesFingerprint } from '../../../src/admin/bundle.js';
import { COMPONENT_NAMES, componentSourceDir } from '../../../src/admin/components.js';
import { LayoutError, hardenLayout } from '../../../src/admin/layout.js';

const dirs: string[] = [];
const tempDir = async () => {
  const dir = await mkdtemp(join(tmpdir(), 'admin-bundle-'));
  dirs.push(dir);
  return dir;
};

afterAll(async () => {
  await Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true })));
});

describe('the components bundle', () => {
  it('is built once, then reused while the sources are unchanged', async () => {
    const dir = await tempDir();
    const first = await ensureComponentsBundle(dir);
    expect(first).toEqual({ file: join(dir, BUNDLE_FILE), built: true });
    const code = await readFile(first.file, 'utf8');
    for (const name of COMPONENT_NAMES) expect(code).toContain(`AdminJS.UserComponents.${name} = `);
    expect(code).not.toContain('sourceMappingURL');
    const mtime = (await stat(first.file)).mtimeMs;

    expect(await ensureComponentsBundle(dir)).toEqual({ file: first.file, built: false });
    expect((await stat(first.file)).mtimeMs).toBe(mtime);

    // A manifest from other sources (an older release) means: build again.
    const manifest = JSON.parse(await readFile(join(dir, 'components.bundle.json'), 'utf8')) as { fingerprint: string };
    await writeFile(join(dir, 'components.bundle.json'), JSON.stringify({ ...manifest, fingerprint: 'old' }));
    expect((await ensureComponentsBundle(dir)).built).toBe(true);
  });

  it('is built again when a module the components share changes', async () => {
    const sources = await tempDir();
    await cp(componentSourceDir() ?? '', sources, { recursive: true });
    const before = await sourcesFingerprint(sources);
    expect(await sourcesFingerprint(sources)).toBe(before);
    await appendFile(join(sources, 'shared', 'styles.ts'), '\n// changed\n');
    expect(await sourcesFingerprint(sources)).not.toBe(before);
  });

  it('survives processes building it at the same time', async () => {
    const dir = await tempDir();
    const results = await Promise.all([ensureComponentsBundle(dir), ensureComponentsBundle(dir), ensureComponentsBundle(dir)]);
    expect(results.every((r) => r.file === join(dir, BUNDLE_FILE))).toBe(true);
    const code = await readFile(join(dir, BUNDLE_FILE), 'utf8');
    expect(code).toContain('AdminJS.UserComponents.PermissionPicker = ');
  });
});

describe("AdminJS's page shell", () => {
  const shell = (state: string) => `
    <!DOCTYPE html><html lang=en><head>
      <script>
        window.REDUX_STATE = ${state};
        window.THEME = {"font":"Roboto"};
        window.THEME_COMPONENTS = {};
        window.AdminJS = { Components: {} };
      </script>
      <title>${'<b>raw</b>'}</title>
      <link rel="stylesheet" href="https://fonts.googleapis.com/css?family=Roboto:300,400,500,700" type="text/css">
      <script src="/api/admin/frontend/assets/global.bundle.js"></script>
      <style>body{}</style>
    </head><body><div id="app" /><script>var app = document.getElementById('app');</script></body></html>`;

  it('escapes the state, drops external links, adds nonces and sets the title', () => {
    const html = hardenLayout(shell('{"branding":{"companyName":"</script><script>alert(1)</script>"}}'), {
      nonce: 'n0nce',
      title: 'Lab <1> & "2"',
    });
    expect(html).not.toContain('</script><script>alert(1)');
    expect(html).toContain('"companyName":"\\u003c/script>\\u003cscript>alert(1)\\u003c/script>"');
    expect(html).not.toContain('googleapis');
    expect(html.match(/<script\b[^>]*>/g)).toEqual([
      '<script nonce="n0nce">',
      '<script nonce="n0nce" src="/api/admin/frontend/assets/global.bundle.js">',
      '<script nonce="n0nce">',
    ]);
    expect(html).toContain('<title>Lab &lt;1&gt; &amp; &quot;2&quot;</title>');
  });

  it('refuses a shell it does not recognise rather than send it unescaped', () => {
    expect(() => hardenLayout('<html><script>window.STATE = {}</script></html>', { nonce: 'n', title: 't' })).toThrow(LayoutError);
  });
});
