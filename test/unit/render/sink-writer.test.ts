import { describe, expect, it, vi } from 'vitest';
import { SinkWriter } from '../../../src/render/sink-writer.js';
import type { ResponseSink } from '../../../src/render/index.js';

/**
 * A sink that keeps each chunk it is given (the chunk itself, not a copy) and takes it — copies its
 * bytes out and calls the write's callback — only `lag` writes later, as a connection with data
 * in flight does. A chunk written over before it was taken would show in the copied bytes.
 */
class LaggingSink implements ResponseSink {
  readonly taken: Buffer[] = [];
  readonly given: Uint8Array[] = [];
  private readonly inFlight: { chunk: Uint8Array; callback?: (error?: Error | null) => void }[] = [];

  constructor(private readonly lag: number) {}

  status(): this {
    return this;
  }

  setHeader(): this {
    return this;
  }

  write(chunk: Uint8Array, callback?: (error?: Error | null) => void): boolean {
    this.given.push(chunk);
    this.inFlight.push({ chunk, callback });
    while (this.inFlight.length > this.lag) this.take();
    return true;
  }

  end(chunk?: string | Uint8Array): this {
    while (this.inFlight.length > 0) this.take();
    if (chunk !== undefined) this.taken.push(Buffer.from(chunk));
    return this;
  }

  once(): this {
    return this;
  }

  private take(): void {
    const { chunk, callback } = this.inFlight.shift()!;
    this.taken.push(Buffer.from(chunk));
    callback?.();
  }
}

const pieces = Array.from({ length: 3_000 }, (_, n) => `piece ${n} `.padEnd(100 + (n % 37), '.'));

async function written(sink: LaggingSink): Promise<string> {
  const out = new SinkWriter(sink, () => undefined, 0, 4096);
  for (const piece of pieces) {
    if (out.add(piece)) await out.flush();
  }
  out.end();
  return Buffer.concat(sink.taken).toString('utf8');
}

describe('SinkWriter chunks', () => {
  it('writes into a chunk again only once the sink has taken it, the bytes sent unchanged', async () => {
    for (const lag of [0, 1, 3]) {
      const sink = new LaggingSink(lag);
      expect(await written(sink)).toBe(pieces.join(''));
      // About 80 chunks were written, through a handful of buffers.
      expect(sink.given.length).toBeGreaterThan(50);
      expect(new Set(sink.given.map((chunk) => chunk.buffer)).size).toBeLessThanOrEqual(lag + 3);
    }
  });

  it('allocates a chunk for each write when the sink never says it has taken one', async () => {
    const sink = new LaggingSink(Number.POSITIVE_INFINITY);
    expect(await written(sink)).toBe(pieces.join(''));
    expect(new Set(sink.given.map((chunk) => chunk.buffer)).size).toBe(sink.given.length);
  });

  it('sends an answer that fits in one chunk as that chunk, its small first chunk carried into it, not copied at the end', () => {
    const sink = new LaggingSink(0);
    const out = new SinkWriter(sink, () => undefined);
    const head = '{"count":50,"results":['.padEnd(300, ' ');
    const records = Array.from({ length: 50 }, (_, n) => `{"n":${n},"note":"${'x'.repeat(1000)}"}`);
    const concat = vi.spyOn(Buffer, 'concat');
    try {
      expect(out.add(head)).toBe(false);
      // Each record reserves several times its size, as records written in place do (render.ts).
      for (const record of records) {
        const due = out.addBytes(record.length * 6, (target, offset) => offset + target.write(record, offset, 'latin1'));
        expect(due).toBe(false);
      }
      out.end();
      expect(concat).not.toHaveBeenCalled();
    } finally {
      concat.mockRestore();
    }
    expect(sink.taken).toHaveLength(1);
    expect(sink.taken[0]?.toString('utf8')).toBe(head + records.join(''));
  });

  it('keeps a first chunk flushed on its own apart from the chunks after it', async () => {
    const sink = new LaggingSink(0);
    const out = new SinkWriter(sink, () => undefined);
    await out.push('a'.repeat(100));
    await out.flush();
    out.add('b'.repeat(5000));
    out.end();
    expect(sink.taken.map((chunk) => chunk.toString('utf8'))).toEqual(['a'.repeat(100), 'b'.repeat(5000)]);
  });
});
