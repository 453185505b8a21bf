import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { loadMallocTrim } from '../../../src/runtime/malloc-trim.js';
import { majorCollection } from '../../../src/runtime/idle-collector.js';

const MB = 1024 * 1024;

/** Resident anonymous memory of this process (what malloc's heap is part of), in bytes. */
function rssAnon(): number {
  const kb = /^RssAnon:\s+(\d+) kB/m.exec(readFileSync('/proc/self/status', 'utf8'))?.[1];
  return Number(kb) * 1024;
}

describe.runIf(process.platform === 'linux')('loadMallocTrim', () => {
  it("gives back the pages of malloc's free chunks that lie between live ones", async () => {
    const trim = loadMallocTrim();
    expect(trim).toBeTypeOf('function');
    // 48 MB of 32 kB buffers (below malloc's mmap threshold: they come from its heap), of
    // which every sixteenth stays alive: once the rest are freed, the heap cannot shrink from
    // its top, and its free space stays resident until it is trimmed.
    let buffers: Buffer[] | undefined = Array.from({ length: 1536 }, () => Buffer.allocUnsafeSlow(32 * 1024).fill(1));
    const kept = buffers.filter((_, i) => i % 16 === 15);
    // eslint-disable-next-line no-useless-assignment -- drops the freed buffers' last references
    buffers = undefined;
    await majorCollection()();
    await new Promise((resolve) => setTimeout(resolve, 200));
    const before = rssAnon();
    expect(trim?.()).toBe(true);
    expect(before - rssAnon()).toBeGreaterThan(16 * MB);
    expect(kept.every((b) => b[0] === 1)).toBe(true);
  });
});
