import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { TaskModuleError, loadTaskModules, taskDefinitionsOf } from '../../../src/worker/task-modules.js';
import { defineTask } from '../../../src/worker/task-definition.js';

const repoRoot = fileURLToPath(new URL('../../../', import.meta.url));

describe('task modules', () => {
  it('loads the example package by a path relative to the working directory', async () => {
    const tasks = await loadTaskModules(['./worker-image/tasks/index.ts'], repoRoot);
    expect(tasks.map((t) => t.name).sort()).toEqual([
      'tasks.add',
      'tasks.fail',
      'tasks.noop',
      'tasks.sleep',
      'tasks.whoami',
      'tasks.write_record',
    ]);
    expect(tasks.find((t) => t.name === 'tasks.add')?.doc).toBe('Add two numbers.');
  });

  it('collects definitions from named exports and arrays, ignoring everything else', () => {
    const a = defineTask({ name: 'a', run: () => 1 });
    const b = defineTask({ name: 'b', run: () => 2 });
    expect(taskDefinitionsOf({ a, other: 42, helper: () => 1, default: [b, 'x'] })).toEqual([a, b]);
  });

  it('explains missing files, modules without tasks and unknown packages', async () => {
    await expect(loadTaskModules(['./nope/tasks.ts'], repoRoot)).rejects.toThrow(TaskModuleError);
    const dir = mkdtempSync(join(tmpdir(), 'tasks-'));
    writeFileSync(join(dir, 'empty.mjs'), 'export const x = 1;\n');
    await expect(loadTaskModules(['./empty.mjs'], dir)).rejects.toThrow(/exports no task definitions/);
    await expect(loadTaskModules(['no-such-task-package-xyz'], dir)).rejects.toThrow(/cannot be loaded/);
  });

  it('loads an installed package by name from the working directory’s node_modules', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tasks-'));
    const pkg = join(dir, 'node_modules', 'acme-tasks');
    await import('node:fs/promises').then((fs) => fs.mkdir(pkg, { recursive: true }));
    writeFileSync(join(pkg, 'package.json'), JSON.stringify({ name: 'acme-tasks', main: 'index.mjs' }));
    // A package built against its own copy of the worker library still produces recognised
    // definitions, because the brand is a global symbol; this one spells the definition out.
    writeFileSync(
      join(pkg, 'index.mjs'),
      "export const hello = { [Symbol.for('cybercom.worker.taskDefinition')]: true, name: 'acme.hello', doc: 'Say hello.', " +
        "run: () => 'hello', timeLimitSeconds: null, softTimeLimitSeconds: null, ignoreResult: false };\n",
    );
    const tasks = await loadTaskModules(['acme-tasks'], dir);
    expect(tasks.map((t) => t.name)).toEqual(['acme.hello']);
  });
});
