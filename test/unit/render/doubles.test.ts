import fc from 'fast-check';
import { BSON, Double, Int32, Long } from 'mongodb';
import { describe, expect, it } from 'vitest';
import { recordReader } from '../../../src/documents/raw-records.js';
import { BsonRecord } from '../../../src/render/bson-record.js';
import { doubleText } from '../../../src/render/double-text.js';
import { renderEnvelopeStream, renderValue, type EnvelopeHead, type Format } from '../../../src/render/index.js';
import { plainJson } from '../../../src/render/plain-json.js';
import { toPlainValue } from '../../../src/render/plain-value.js';
import { contentPreText, FakeSink, fromArray, pageContext, parseXml } from './support.js';

/**
 * A BSON double is written so that it reads back as a double (`3.0`, `-0.0`) in every format,
 * whether the record is rendered from its bytes or decoded; integers stay integers.
 */

const head: EnvelopeHead = { count: 1, meta: { page: 1, page_size: 1, pages: 1 }, next: null, previous: null };

describe('doubleText', () => {
  it.each([
    [3, '3.0'],
    [-0, '-0.0'],
    [0, '0.0'],
    [0.5, '0.5'],
    [-2.25, '-2.25'],
    [1e20, '100000000000000000000.0'],
    [1e21, '1e+21'],
    [5e-324, '5e-324'],
    [Number.MAX_VALUE, '1.7976931348623157e+308'],
  ])('%d is %s', (value, text) => {
    expect(doubleText(value)).toBe(text);
  });

  it('always reads back as the same number, and never as an integer literal', () => {
    fc.assert(
      fc.property(fc.double({ noNaN: true, noDefaultInfinity: true }), (value) => {
        const text = doubleText(value);
        expect(Object.is(JSON.parse(text), value)).toBe(true);
        expect(text).toMatch(/[.e]/);
      }),
    );
  });
});

describe('doubles in the plain tree', () => {
  const record = { d: new Double(3), z: new Double(-0), f: new Double(2.5), i: new Int32(3), l: Long.fromNumber(4), n: 5 };

  it('are written 3.0 and -0.0 by the JSON serializer; integers as integers', () => {
    expect(plainJson(toPlainValue(record))).toBe('{"d":3.0,"z":-0.0,"f":2.5,"i":3,"l":4,"n":5}');
    expect(plainJson(toPlainValue([new Double(1), [new Double(2)], { a: null, b: 'x' }]))).toBe('[1.0,[2.0],{"a":null,"b":"x"}]');
  });

  it('is JSON.stringify for values without whole doubles', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        expect(plainJson(toPlainValue(value))).toBe(JSON.stringify(value));
      }),
    );
  });

  async function rendered(format: Format, value: unknown): Promise<{ whole: string; streamed: string }> {
    const whole = new FakeSink();
    renderValue(whole, format, 200, { ...head, results: [value] }, pageContext());
    const streamed = new FakeSink();
    await renderEnvelopeStream(streamed, format, head, fromArray([value]), pageContext());
    return { whole: whole.body, streamed: streamed.body };
  }

  const bytes = BSON.serialize(record);
  const fromBytes = new BsonRecord(bytes, recordReader({ bsonRegExp: true }));

  it.each([
    ['json', (body: string) => body.includes('"d":3.0,"z":-0.0,"f":2.5,"i":3,"l":4,"n":5')],
    ['ndjson', (body: string) => body === '{"_id":"x","d":3.0,"z":-0.0,"f":2.5,"i":3,"l":4,"n":5}\n'],
    ['csv', (body: string) => body.split('\r\n')[1] === 'x,3.0,-0.0,2.5,3,4,5'],
    ['xml', (body: string) => JSON.stringify(parseXml(body)).includes('"d":"3.0","z":"-0.0","f":"2.5","i":"3","l":"4","n":"5"')],
    ['api', (body: string) => contentPreText(body).includes('"d": 3.0,\n            "z": -0.0,')],
  ] as const)('%s: as the record is decoded, from its bytes and as driver values, whole or streamed', async (format, check) => {
    for (const value of [{ _id: 'x', ...record }, new BsonRecord(BSON.serialize({ _id: 'x', ...record }), recordReader({}))]) {
      const { whole, streamed } = await rendered(format, value);
      expect(check(streamed), streamed).toBe(true);
      if (format !== 'ndjson' && format !== 'csv') expect(check(whole), whole).toBe(true);
    }
  });

  it('a record read from its bytes writes the same JSON as the decoded record', () => {
    expect(fromBytes.json()).toBe(plainJson(toPlainValue(fromBytes)));
    expect(fromBytes.json()).toBe('{"d":3.0,"z":-0.0,"f":2.5,"i":3,"l":4,"n":5}');
  });
});

describe('one record answered whole from its bytes', () => {
  const record = {
    _id: 'x',
    d: new Double(3),
    z: new Double(-0),
    s: 'é "q" \u2028',
    n: new Int32(5),
    t: new Date(0),
    nested: [{ a: new Double(0.5) }],
  };
  const fromBytes = new BsonRecord(BSON.serialize(record), recordReader({}));

  it.each(['json', 'jsonp', 'xml', 'api'] as const)('%s: the same answer as the decoded record', (format) => {
    const ctx = { ...pageContext(), callback: 'cb' };
    const [bytes, decoded] = [new FakeSink(), new FakeSink()];
    renderValue(bytes, format, 200, fromBytes, ctx);
    renderValue(decoded, format, 200, record, ctx);
    expect(bytes.body).toBe(decoded.body);
    expect(bytes.headers.get('content-type')).toBe(decoded.headers.get('content-type'));
    expect(bytes.body).toContain('3.0');
  });

  it('json: exactly the record, nothing around it', () => {
    const sink = new FakeSink();
    renderValue(sink, 'json', 200, fromBytes, pageContext());
    expect(JSON.parse(sink.body)).toEqual({
      _id: 'x',
      d: 3,
      z: -0,
      s: 'é "q" \u2028',
      n: 5,
      t: '1970-01-01T00:00:00.000Z',
      nested: [{ a: 0.5 }],
    });
    expect(sink.statusCode).toBe(200);
  });
});

describe('a value converted twice', () => {
  it('keeps its whole doubles (a route converted it before the renderer does)', () => {
    expect(plainJson(toPlainValue(toPlainValue({ d: new Double(3) })))).toBe('{"d":3.0}');
  });
});
