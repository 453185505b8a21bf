import { mkdtemp, mkdir, readFile, rm, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ensureServiceBuild } from '../../../../src/installation/runner/service-build.js';

describe('ensureServiceBuild', () => {
  let root: string;
  beforeEach(async () => {
    root = await mkdtemp(join(tmpdir(), 'service-build-'));
    await mkdir(join(root, 'src', 'sub'), { recursive: true });
    await mkdir(join(root, 'worker-image', 'tasks'), { recursive: true });
    await writeFile(join(root, 'src', 'cli.ts'), "import { two } from './sub/two.js';\nconst n: number = two();\nconsole.log(n);\n");
    await writeFile(join(root, 'src', 'sub', 'two.ts'), 'export function two(): number {\n  return 2;\n}\n');
    await writeFile(join(root, 'src', 'sub', 'types.d.ts'), 'declare const x: number;\n');
    await writeFile(
      join(root, 'worker-image', 'tasks', 'index.ts'),
      "import { two } from '../../src/sub/two.js';\nexport const tasks: number[] = [two()];\n",
    );
  });
  afterEach(() => rm(root, { recursive: true, force: true }));

  it('compiles every module of src/ and the task package into dist/, types removed, tree kept', async () => {
    const build = await ensureServiceBuild(root);
    expect(build).toEqual({ entry: join(root, 'dist', 'src', 'cli.js'), built: true, files: 3 });
    const cli = await readFile(join(root, 'dist', 'src', 'cli.js'), 'utf8');
    expect(cli).toContain('from "./sub/two.js"');
    expect(cli).not.toContain(': number');
    expect(await readFile(join(root, 'dist', 'worker-image', 'tasks', 'index.js'), 'utf8')).toContain('../../src/sub/two.js');
    await expect(readFile(join(root, 'dist', 'src', 'sub', 'types.d.js'))).rejects.toThrow();
  });

  it('does nothing while the build is current, and builds again after a source changes', async () => {
    await ensureServiceBuild(root);
    expect((await ensureServiceBuild(root)).built).toBe(false);
    const later = new Date(Date.now() + 60_000);
    await writeFile(join(root, 'src', 'sub', 'two.ts'), 'export function two(): number {\n  return 22;\n}\n');
    await utimes(join(root, 'src', 'sub', 'two.ts'), later, later);
    expect((await ensureServiceBuild(root)).built).toBe(true);
    expect(await readFile(join(root, 'dist', 'src', 'sub', 'two.js'), 'utf8')).toContain('22');
  });

  it("bundles the explorer's and the browsable page's browser scripts as classic scripts for the page, not as Node modules", async () => {
    const scripts = [
      ...['chart', 'histogram', 'map'].map((name) => ({ name, dir: join('src', 'explorer', 'browser') })),
      { name: 'browsable', dir: join('src', 'render', 'browser') },
    ];
    for (const { name, dir } of scripts) {
      await mkdir(join(root, dir), { recursive: true });
      await writeFile(join(root, dir, `${name}.ts`), `const n: number = 1;\ndocument.title = '${name}' + n;\nexport {};\n`);
    }
    const build = await ensureServiceBuild(root);
    expect(build.files).toBe(3);
    for (const { name, dir } of scripts) {
      const script = await readFile(join(root, 'dist', dir, `${name}.js`), 'utf8');
      expect(script).toMatch(/^("use strict";)?\(\(\)=>\{/);
      expect(script).toContain(name);
    }
  });

  it('builds again when the entry point is gone, even with a current stamp', async () => {
    await ensureServiceBuild(root);
    await rm(join(root, 'dist', 'src', 'cli.js'));
    expect((await ensureServiceBuild(root)).built).toBe(true);
    expect(await readFile(join(root, 'dist', 'src', 'cli.js'), 'utf8')).toContain('two()');
  });
});
