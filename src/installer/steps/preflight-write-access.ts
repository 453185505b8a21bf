/** Preflight: the install directory (or where it will be created) is writable by us. */
import { constants } from 'node:fs';
import { access } from 'node:fs/promises';
import type { InstallContext, Step } from '../step.js';
import { nearestExisting } from './preflight-resources.js';

export const preflightWriteAccess: Step = {
  id: 'preflight-write-access',
  title: 'Write access',
  phase: 'preflight',
  async run(ctx: InstallContext) {
    const target = nearestExisting(ctx.layout.root);
    try {
      await access(target, constants.W_OK | constants.X_OK);
    } catch {
      throw new Error(`cannot write to ${target} (run as a user who can, or choose another --dir)`);
    }
    return target === ctx.layout.root ? `${target} (exists)` : `${ctx.layout.root} will be created`;
  },
};
