import { Binary, Decimal128, Int32, Long, ObjectId, Timestamp } from 'mongodb';
import { describe, expect, it } from 'vitest';
import { cellText, columnKeys, csvField, flattenRecord } from '../../../src/render/csv-cells.js';
import { contentTypeFor, renderEnvelopeStream, renderValue, toPlainValue, type EnvelopeHead } from '../../../src/render/index.js';
import { FakeSink, fromArray, pageContext } from './support.js';

const head: EnvelopeHead = { count: 0, meta: { page: 1, page_size: 0, pages: 1 }, next: null, previous: null };

async function csvOf(records: unknown[], fields?: string[]): Promise<string> {
  const sink = new FakeSink();
  await renderEnvelopeStream(sink, 'csv', head, fromArray(records), { ...pageContext(), ...(fields ? { fields } : {}) });
  return sink.body;
}

describe('CSV cells', () => {
  it.each([
    ['plain', 'plain'],
    ['a,b', '"a,b"'],
    ['say "hi"', '"say ""hi"""'],
    ['two\nlines', '"two\nlines"'],
    ['cr\r', '"cr\r"'],
    ['=1+1', '=1+1'], // no formula guard: the data goes out as it is
    ['', ''],
  ])('quotes %j as %j (RFC 4180)', (text, quoted) => {
    expect(csvField(text)).toBe(quoted);
  });

  it('writes scalars, nulls and arrays as the rules say', () => {
    expect(cellText(null)).toBe('');
    expect(cellText(undefined)).toBe('');
    expect(cellText(true)).toBe('true');
    expect(cellText(false)).toBe('false');
    expect(cellText(1.5)).toBe('1.5');
    expect(cellText([1, 'a', { b: 2 }])).toBe('[1,"a",{"b":2}]');
  });

  it('flattens nested objects into dotted columns, Extended JSON wrappers and empty objects into one cell', () => {
    const record = toPlainValue({
      _id: new ObjectId('65a1b2c3d4e5f60718293a4b'),
      loc: { lat: 35.2, lon: -97.4, deep: { x: 1 } },
      re: /ab+/i,
      empty: {},
      list: [1, 2],
    });
    expect([...flattenRecord(record).entries()]).toEqual([
      ['_id', '65a1b2c3d4e5f60718293a4b'],
      ['loc.lat', '35.2'],
      ['loc.lon', '-97.4'],
      ['loc.deep.x', '1'],
      ['re', '{"$regex":"ab+","$options":"i"}'],
      ['empty', '{}'],
      ['list', '[1,2]'],
    ]);
  });

  it('escapes "." and "\\" inside keys, so a key with a dot and a nested key are two columns', () => {
    const record = toPlainValue({ a: { b: 1 }, 'a.b': 2, 'x\\': { y: 3 }, 'x\\.y': 4 });
    expect([...flattenRecord(record).entries()]).toEqual([
      ['a.b', '1'],
      ['a\\.b', '2'],
      ['x\\\\.y', '3'],
      ['x\\\\\\.y', '4'],
    ]);
  });

  it.each([
    ['loc.lat', ['loc', 'lat']],
    ['a\\.b', ['a.b']],
    ['a\\\\.b', ['a\\', 'b']],
    ['a\\\\\\.b', ['a\\.b']],
    ['a\\b', undefined],
    ['a\\', undefined],
  ])('reads the column name %j as the keys %j', (column, keys) => {
    expect(columnKeys(column)).toEqual(keys);
  });

  it('gives a record that is not an object one column, "value"', () => {
    expect([...flattenRecord('x').entries()]).toEqual([['value', 'x']]);
  });
});

describe('CSV document', () => {
  it('has a header of the sampled columns, _id first, and one CRLF line per record', async () => {
    const body = await csvOf([
      { name: 'a', _id: 1, loc: { lat: 1 } },
      { _id: 2, extra: true, loc: { lat: 2, lon: 3 } },
    ]);
    expect(body).toBe('_id,name,loc.lat,extra,loc.lon\r\n1,a,1,,\r\n2,,2,true,3\r\n');
  });

  it('converts BSON values: ObjectId hex, ISO dates, decimals, longs, binary base64', async () => {
    const body = await csvOf([
      {
        _id: new ObjectId('65a1b2c3d4e5f60718293a4b'),
        when: new Date(Date.UTC(2024, 1, 29, 12, 30)),
        price: Decimal128.fromString('19.99'),
        big: Long.fromString('9007199254740993'),
        n: new Int32(7),
        bin: new Binary(Buffer.from('hi')),
        ts: new Timestamp({ t: 5, i: 1 }),
      },
    ]);
    expect(body).toBe(
      '_id,when,price,big,n,bin,ts.t,ts.i\r\n65a1b2c3d4e5f60718293a4b,2024-02-29T12:30:00.000Z,19.99,9007199254740993,7,aGk=,5,1\r\n',
    );
  });

  it('keeps both values of a key with a dot and a nested key of the same path', async () => {
    const records = [{ _id: 1, a: { b: 'nested' }, 'a.b': 'literal' }];
    expect(await csvOf(records)).toBe('_id,a.b,a\\.b\r\n1,nested,literal\r\n');
    expect(await csvOf(records, ['a\\.b', 'a.b'])).toBe('a\\.b,a.b\r\nliteral,nested\r\n');
  });

  it('uses `fields` as the columns, in their order, with sub-documents as JSON text', async () => {
    const body = await csvOf([{ _id: 1, loc: { lat: 1, lon: 2 }, name: 'x' }], ['name', 'loc', 'missing', 'loc.lon']);
    expect(body).toBe('name,loc,missing,loc.lon\r\nx,"{""lat"":1,""lon"":2}",,2\r\n');
  });

  it('writes only the header for an empty result with `fields`, and nothing without', async () => {
    expect(await csvOf([], ['a', 'b'])).toBe('a,b\r\n');
    expect(await csvOf([])).toBe('');
  });

  it('takes the columns from the first 1,000 records only', async () => {
    const records = Array.from({ length: 1001 }, (_, i) => (i === 1000 ? { _id: i, late: 'x' } : { _id: i }));
    const lines = (await csvOf(records)).split('\r\n');
    expect(lines[0]).toBe('_id');
    expect(lines[1001]).toBe('1000');
    expect(lines).toHaveLength(1003); // header, 1001 records, the empty string after the last CRLF
  });

  it('renders a single value as one record, with the CSV content type', () => {
    const sink = new FakeSink();
    renderValue(sink, 'csv', 200, { _id: 'a', n: 1 }, pageContext());
    expect(sink.body).toBe('_id,n\r\na,1\r\n');
    expect(sink.headers.get('content-type')).toBe(contentTypeFor('csv'));
    expect(contentTypeFor('csv')).toBe('text/csv; charset=utf-8');
  });
});

describe('NDJSON document', () => {
  it('writes one JSON record per line, without the envelope', async () => {
    const sink = new FakeSink();
    await renderEnvelopeStream(
      sink,
      'ndjson',
      head,
      fromArray([{ _id: new ObjectId('65a1b2c3d4e5f60718293a4b') }, { a: [1, { b: null }] }]),
      pageContext(),
    );
    expect(sink.body).toBe('{"_id":"65a1b2c3d4e5f60718293a4b"}\n{"a":[1,{"b":null}]}\n');
    expect(sink.headers.get('content-type')).toBe('application/x-ndjson; charset=utf-8');
  });
});
