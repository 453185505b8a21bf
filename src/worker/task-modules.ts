/**
 * Loads the task modules an operator names in WORKER_TASK_MODULES, so tasks are added by
 * configuration rather than by changing the worker. Each entry is a local path (relative to the
 * working directory) or an installed package name; every export that is a task definition is
 * registered (a default export may also be an array of definitions).
 */
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { isAbsolute, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { isTaskDefinition, type TaskDefinition } from './task-definition.js';

export class TaskModuleError extends Error {
  constructor(spec: string, why: string) {
    super(`Task module "${spec}": ${why}`);
    this.name = 'TaskModuleError';
  }
}

const looksLikePath = (spec: string): boolean => spec.startsWith('.') || isAbsolute(spec) || /\.(c|m)?[jt]sx?$/.test(spec);

/** The URL or specifier to import for one configured entry. */
export function resolveTaskModule(spec: string, baseDir = process.cwd()): string {
  if (looksLikePath(spec)) {
    const path = resolve(baseDir, spec);
    if (!existsSync(path)) throw new TaskModuleError(spec, `no such file ${path}`);
    return pathToFileURL(path).href;
  }
  try {
    // Installed next to the deployment (its node_modules), not next to the worker's sources.
    return pathToFileURL(createRequire(join(baseDir, 'package.json')).resolve(spec)).href;
  } catch {
    // ESM-only packages without a "require" export: let the import resolver try.
    return spec;
  }
}

export function taskDefinitionsOf(moduleExports: Record<string, unknown>): TaskDefinition[] {
  const found = new Set<TaskDefinition>();
  for (const value of Object.values(moduleExports)) {
    if (isTaskDefinition(value)) found.add(value);
    else if (Array.isArray(value)) for (const item of value) if (isTaskDefinition(item)) found.add(item);
  }
  return [...found];
}

export async function loadTaskModules(specs: readonly string[], baseDir = process.cwd()): Promise<TaskDefinition[]> {
  const definitions: TaskDefinition[] = [];
  for (const spec of specs) {
    const target = resolveTaskModule(spec, baseDir);
    let moduleExports: Record<string, unknown>;
    try {
      moduleExports = (await import(target)) as Record<string, unknown>;
    } catch (error) {
      throw new TaskModuleError(spec, `cannot be loaded: ${(error as Error).message}`);
    }
    const found = taskDefinitionsOf(moduleExports);
    if (found.length === 0) throw new TaskModuleError(spec, 'exports no task definitions (defineTask)');
    definitions.push(...found);
  }
  return definitions;
}
