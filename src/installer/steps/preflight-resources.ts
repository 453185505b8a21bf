/**
 * Preflight: enough disk space where the data will live and enough memory. The numbers are what
 * the four services need to start and hold a modest data set; more data needs more disk.
 */
import { statfs } from 'node:fs/promises';
import { freemem, totalmem } from 'node:os';
import { dirname } from 'node:path';
import { existsSync } from 'node:fs';
import type { InstallContext, Step } from '../step.js';

const MIN_DISK_BYTES = 2 * 1024 ** 3;
const MIN_MEMORY_BYTES = 1 * 1024 ** 3;
const GIB = 1024 ** 3;

/** The directory itself, or its nearest existing ancestor (what statfs and access can check). */
export function nearestExisting(path: string): string {
  let current = path;
  while (!existsSync(current) && dirname(current) !== current) current = dirname(current);
  return current;
}

export const preflightResources: Step = {
  id: 'preflight-resources',
  title: 'Disk and memory',
  phase: 'preflight',
  async run(ctx: InstallContext) {
    const fs = await statfs(nearestExisting(ctx.layout.root));
    const freeDisk = fs.bavail * fs.bsize;
    if (freeDisk < MIN_DISK_BYTES)
      throw new Error(
        `only ${(freeDisk / GIB).toFixed(1)} GiB free at ${ctx.layout.root}; at least ${MIN_DISK_BYTES / GIB} GiB are needed`,
      );
    if (totalmem() < MIN_MEMORY_BYTES) throw new Error(`only ${(totalmem() / GIB).toFixed(1)} GiB of memory; at least 1 GiB is needed`);
    if (freemem() < 512 * 1024 ** 2)
      ctx.progress.warn(`little free memory (${(freemem() / 1024 ** 2).toFixed(0)} MiB): services may start slowly`);
    return `${(freeDisk / GIB).toFixed(1)} GiB free disk, ${(totalmem() / GIB).toFixed(1)} GiB memory`;
  },
};
