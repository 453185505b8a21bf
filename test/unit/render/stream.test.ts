import { XMLValidator } from 'fast-xml-parser';
import { Int32, ObjectId } from 'mongodb';
import { describe, expect, it } from 'vitest';
import { ApiError } from '../../../src/errors.js';
import {
  contentTypeFor,
  FORMATS,
  renderEnvelopeStream,
  renderValue,
  ResponseClosedError,
  ResponseStalledError,
} from '../../../src/render/index.js';
import type { EnvelopeHead, Format, RenderContext } from '../../../src/render/index.js';
import { contentPreText, DestroyableSink, FakeSink, fromArray, pageContext, parseXml, tick, unwrapJsonp } from './support.js';

const hex = (n: number): string => n.toString(16).padStart(24, '0');
const when = (n: number): Date => new Date(Date.UTC(2024, 0, 1) + n * 1000);

/** Records as the driver returns them, and the plain JSON they must come out as. */
const driverRecord = (n: number): Record<string, unknown> => ({
  _id: new ObjectId(hex(n)),
  n: new Int32(n),
  when: when(n),
  tags: n % 2 ? ['odd', `<${n}>`] : [],
});
const plainRecord = (n: number): Record<string, unknown> => ({
  _id: hex(n),
  n,
  when: when(n).toISOString(),
  tags: n % 2 ? ['odd', `<${n}>`] : [],
});

const range = (count: number): number[] => Array.from({ length: count }, (_, index) => index + 1);

function headFor(count: number): EnvelopeHead {
  return {
    count,
    meta: { page: 1, page_size: 0, pages: 1 },
    next: null,
    previous: count > 1 ? 'http://localhost:8080/api/data_store/data/db1/col1/?page_size=0&page=0' : null,
  };
}

function renderWhole(format: Format, head: EnvelopeHead, records: unknown[], ctx: RenderContext): string {
  const sink = new FakeSink();
  renderValue(sink, format, 200, { count: head.count, meta: head.meta, next: head.next, previous: head.previous, results: records }, ctx);
  return sink.body;
}

/** The envelope back out of a body, as JSON-compatible data (XML is compared separately). */
function parsedJsonEnvelope(format: 'json' | 'jsonp' | 'api', body: string): unknown {
  if (format === 'json') return JSON.parse(body);
  if (format === 'jsonp') return JSON.parse(unwrapJsonp(body).json);
  return JSON.parse(contentPreText(body));
}

/** What fast-xml-parser gives for one plainRecord (all text, empty array → empty element). */
const xmlRecord = (n: number): unknown => ({
  _id: hex(n),
  n: String(n),
  when: when(n).toISOString(),
  tags: n % 2 ? { 'list-item': ['odd', `<${n}>`] } : '',
});

describe('renderEnvelopeStream equals renderValue of the whole envelope', () => {
  const ctx: RenderContext = { ...pageContext(), callback: 'cb.done' };

  for (const format of FORMATS) {
    for (const size of [0, 1, 2, 3000]) {
      it(`${format}, ${size} records`, async () => {
        const numbers = range(size);
        const head = headFor(size);
        const sink = new FakeSink();
        await renderEnvelopeStream(sink, format, head, fromArray(numbers.map(driverRecord)), ctx);

        expect(sink.statusCode).toBe(200);
        expect(sink.headers.get('content-type')).toBe(contentTypeFor(format));
        expect(sink.ended).toBe(true);
        expect(sink.body).toBe(renderWhole(format, head, numbers.map(driverRecord), ctx));

        if (format === 'xml') {
          expect(XMLValidator.validate(sink.body)).toBe(true);
          expect(parseXml(sink.body)).toEqual({
            '?xml': '',
            root: {
              count: String(size),
              meta: { page: '1', page_size: '0', pages: '1' },
              next: '',
              previous: size > 1 ? 'http://localhost:8080/api/data_store/data/db1/col1/?page_size=0&page=0' : '',
              results: size === 0 ? '' : { 'list-item': numbers.map(xmlRecord) },
            },
          });
        } else if (format === 'csv') {
          const lines = sink.body.split('\r\n');
          expect(lines.slice(1, -1)).toHaveLength(size);
          if (size > 0) expect(lines[0]).toBe('_id,n,when,tags');
        } else if (format === 'ndjson') {
          expect(
            sink.body
              .split('\n')
              .filter((line) => line !== '')
              .map((line) => JSON.parse(line) as unknown),
          ).toEqual(numbers.map(plainRecord));
        } else {
          expect(parsedJsonEnvelope(format, sink.body)).toEqual({ ...headFor(size), results: numbers.map(plainRecord) });
        }
        if (format === 'api')
          expect(contentPreText(sink.body)).toBe(JSON.stringify({ ...headFor(size), results: numbers.map(plainRecord) }, null, 4));
      });
    }
  }
});

describe('renderEnvelopeStream memory and backpressure', () => {
  it('writes bounded chunks instead of one big string', async () => {
    const sink = new FakeSink();
    await renderEnvelopeStream(sink, 'json', headFor(20_000), fromArray(range(20_000).map(driverRecord)), pageContext());
    const largestRecord = Math.max(...range(20_000).map((n) => JSON.stringify(plainRecord(n)).length));
    expect(sink.chunks.length).toBeGreaterThan(10);
    for (const chunk of sink.chunks) expect(chunk.length).toBeLessThanOrEqual(64 * 1024 + largestRecord + 1);
    expect((JSON.parse(sink.body) as { results: unknown[] }).results).toHaveLength(20_000);
  });

  it('stops pulling records while the sink is full and resumes on drain', async () => {
    const total = 20_000;
    let pulled = 0;
    async function* records(): AsyncGenerator<unknown> {
      for (const n of range(total)) {
        pulled += 1;
        yield driverRecord(n);
      }
    }
    const sink = new FakeSink(() => false); // every write fills the sink
    let finished = false;
    const done = renderEnvelopeStream(sink, 'xml', headFor(total), records(), pageContext()).then(() => {
      finished = true;
    });

    for (let round = 0; round < 20; round += 1) await tick();
    expect(sink.waitingForDrain).toBe(true);
    expect(sink.chunks).toHaveLength(1);
    const pulledWhileFull = pulled;
    expect(pulledWhileFull).toBeLessThan(total / 4);
    for (let round = 0; round < 20; round += 1) await tick();
    expect(pulled).toBe(pulledWhileFull);
    expect(finished).toBe(false);

    while (!finished) {
      if (sink.waitingForDrain) sink.emitDrain();
      await tick();
    }
    await done;
    expect(sink.violations).toBe(0);
    expect(sink.writesAfterEnd).toBe(0);
    expect(sink.body).toBe(renderWhole('xml', headFor(total), range(total).map(driverRecord), pageContext()));
  });

  it('never writes while full when the sink drains intermittently', async () => {
    const sink = new FakeSink((write) => write % 3 !== 0);
    const drainer = setInterval(() => {
      if (sink.waitingForDrain) sink.emitDrain();
    }, 1);
    try {
      await renderEnvelopeStream(sink, 'api', headFor(5000), fromArray(range(5000).map(driverRecord)), pageContext());
    } finally {
      clearInterval(drainer);
    }
    expect(sink.violations).toBe(0);
    expect(sink.chunks.length).toBeGreaterThan(3);
    expect(JSON.parse(contentPreText(sink.body))).toEqual({ ...headFor(5000), results: range(5000).map(plainRecord) });
  });
});

describe('renderEnvelopeStream failures', () => {
  const failure = new Error('cursor died');

  /** Enough records to get past the first chunk, then an error. */
  async function* failingAfter(count: number): AsyncGenerator<unknown> {
    for (const n of range(count)) yield driverRecord(n);
    throw failure;
  }

  it('JSON: cuts the connection and leaves the document unterminated', async () => {
    const sink = new DestroyableSink();
    await expect(renderEnvelopeStream(sink, 'json', headFor(9000), failingAfter(5000), pageContext())).rejects.toBe(failure);
    expect(sink.destroyCalls).toBe(1);
    expect(sink.ended).toBe(false);
    expect(sink.body.length).toBeGreaterThan(0);
    expect(() => JSON.parse(sink.body)).toThrow(SyntaxError);
    // What was written is whole records; only the envelope's closing is missing.
    const written = (JSON.parse(`${sink.body}]}`) as { results: unknown[] }).results;
    expect(written.length).toBeGreaterThan(0);
    expect(written.length).toBeLessThan(5000);
    expect(written).toEqual(range(written.length).map(plainRecord));
  });

  it('XML without destroy(): ends the response with an unterminated document', async () => {
    const sink = new FakeSink();
    await expect(renderEnvelopeStream(sink, 'xml', headFor(9000), failingAfter(5000), pageContext())).rejects.toBe(failure);
    expect(sink.ended).toBe(true);
    expect(XMLValidator.validate(sink.body)).not.toBe(true);
    expect(sink.body).not.toContain('</root>');
  });

  it('JSONP: no closing call, so the script is a syntax error', async () => {
    const sink = new DestroyableSink();
    await expect(renderEnvelopeStream(sink, 'jsonp', headFor(9000), failingAfter(5000), pageContext())).rejects.toBe(failure);
    expect(sink.destroyCalls).toBe(1);
    expect(sink.body.startsWith('/**/callback(')).toBe(true);
    expect(sink.body.endsWith(');')).toBe(false);
  });

  it('HTML: shows a notice after the last complete record and never closes the page', async () => {
    const sink = new DestroyableSink();
    await expect(renderEnvelopeStream(sink, 'api', headFor(9000), failingAfter(3000), pageContext())).rejects.toBe(failure);
    expect(sink.ended).toBe(true);
    expect(sink.body).toContain('<p class="error">');
    expect(sink.body).toContain('incomplete');
    expect(sink.body).not.toContain('</html>');
    // Every record that was produced is on the page before the notice.
    expect(sink.body).toContain(`&quot;${hex(3000)}&quot;`);
  });

  it('an error before anything was written leaves the sink untouched for an error response', async () => {
    const sink = new DestroyableSink();
    await expect(renderEnvelopeStream(sink, 'json', headFor(10), failingAfter(2), pageContext())).rejects.toBe(failure);
    expect(sink.statusCode).toBeUndefined();
    expect(sink.headers.size).toBe(0);
    expect(sink.chunks).toEqual([]);
    expect(sink.ended).toBe(false);
    expect(sink.destroyCalls).toBe(0);
  });

  it('stops and closes the cursor when the client goes away during backpressure', async () => {
    let closedCursor = false;
    async function* records(): AsyncGenerator<unknown> {
      try {
        for (const n of range(50_000)) yield driverRecord(n);
      } finally {
        closedCursor = true;
      }
    }
    const sink = new FakeSink(() => false);
    const done = renderEnvelopeStream(sink, 'json', headFor(50_000), records(), pageContext());
    const outcome = done.then(
      () => 'resolved',
      (error: unknown) => error,
    );
    while (!sink.waitingForDrain) await tick();
    sink.emitClose();
    const error = await outcome;
    expect(error).toBeInstanceOf(ResponseClosedError);
    expect(closedCursor).toBe(true);
  });

  it('aborts, cutting the connection and closing the cursor, when the client takes nothing for the send timeout', async () => {
    let closedCursor = false;
    let pulled = 0;
    async function* records(): AsyncGenerator<unknown> {
      try {
        for (const n of range(50_000)) {
          pulled += 1;
          yield driverRecord(n);
        }
      } finally {
        closedCursor = true;
      }
    }
    // The client takes the first chunk, then nothing more.
    const sink = new DestroyableSink((write) => write < 2);
    const started = performance.now();
    const outcome = await Promise.race([
      renderEnvelopeStream(sink, 'json', headFor(50_000), records(), pageContext(), 100).then(
        () => 'resolved',
        (error: unknown) => error,
      ),
      new Promise((resolve) => setTimeout(() => resolve('still streaming after 2 s'), 2_000)),
    ]);
    expect(outcome).toBeInstanceOf(ResponseStalledError);
    expect(performance.now() - started).toBeGreaterThanOrEqual(100);
    expect(sink.destroyCalls).toBe(1);
    expect(closedCursor).toBe(true);
    expect(pulled).toBeLessThan(50_000);
  });

  it('a client that keeps taking chunks is never cut, however long the stream', async () => {
    const sink = new DestroyableSink(() => false);
    const done = renderEnvelopeStream(sink, 'json', headFor(20_000), fromArray(range(20_000).map(driverRecord)), pageContext(), 100);
    let drains = 0;
    // Each chunk is taken after 60 ms: slow, but within the send timeout every time.
    const reader = setInterval(() => {
      if (!sink.waitingForDrain) return;
      drains += 1;
      sink.emitDrain();
    }, 60);
    await done.finally(() => clearInterval(reader));
    expect(drains).toBeGreaterThan(3);
    expect(sink.destroyCalls).toBe(0);
    expect(JSON.parse(sink.body).results).toHaveLength(20_000);
  });

  it('refuses an unsafe JSONP callback before pulling any record', async () => {
    let pulled = 0;
    async function* records(): AsyncGenerator<unknown> {
      pulled += 1;
      yield {};
    }
    const sink = new FakeSink();
    const attempt = renderEnvelopeStream(sink, 'jsonp', headFor(1), records(), { ...pageContext(), callback: 'a=b' });
    await expect(attempt).rejects.toBeInstanceOf(ApiError);
    await expect(attempt).rejects.toMatchObject({ status: 400, code: 'invalid_callback' });
    expect(pulled).toBe(0);
    expect(sink.chunks).toEqual([]);
  });
});
