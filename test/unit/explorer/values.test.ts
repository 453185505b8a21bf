/** Record values as the explorer shows them in a cell, and the Extended JSON its "= this" links match them by. */
import { Binary, Decimal128, Double, Int32, Long, ObjectId } from 'mongodb';
import { describe, expect, it } from 'vitest';
import { kindOf, sameValueKey, showValue, storedType } from '../../../src/explorer/values.js';

describe('showValue', () => {
  it.each([
    [new Date('2024-05-01T00:00:00Z'), 'date', '2024-05-01', '{"$date":"2024-05-01T00:00:00.000Z"}'],
    [new Date('2024-05-01T12:30:00Z'), 'date', '2024-05-01 12:30:00 UTC', '{"$date":"2024-05-01T12:30:00.000Z"}'],
    [1234567, 'number', '1\u202f234\u202f567', '1234567'],
    [1994, 'number', '1994', '1994'],
    [0.1, 'number', '0.1', '0.1'],
    [new Double(21), 'number', '21.0', '21'],
    [new Double(0.5), 'number', '0.5', '0.5'],
    [new Int32(21), 'number', '21', '21'],
    [Long.fromString('9007199254740993'), 'number', '9007199254740993', '{"$numberLong":"9007199254740993"}'],
    [Decimal128.fromString('1.10'), 'number', '1.10', '{"$numberDecimal":"1.10"}'],
    ['<b>x</b>', 'text', '&lt;b&gt;x&lt;/b&gt;', '"<b>x</b>"'],
    [null, 'null', 'null', 'null'],
    [true, 'bool', 'true', 'true'],
  ])('shows %s', (value, kind, text, matchJson) => {
    const shown = showValue(value);
    expect(shown.kind).toBe(kind);
    expect(shown.html).toContain(text);
    expect(shown.matchJson).toBe(matchJson);
  });

  it('shows an ObjectId as its hex digits with its creation time, a GeoJSON point as coordinates', () => {
    const id = ObjectId.createFromHexString('65f000000000000000000001');
    expect(showValue(id)).toMatchObject({ kind: 'objectid', matchJson: '{"$oid":"65f000000000000000000001"}' });
    expect(showValue(id).html).toContain('created 2024-03-12');
    expect(showValue({ type: 'Point', coordinates: [-97.44, 35.22] }).html).toContain('35.22000, -97.44000');
    expect(showValue({ type: 'Point', coordinates: [new Double(-97.44), new Int32(35)] }).html).toContain('35.00000, -97.44000');
    expect(
      showValue({
        type: 'Polygon',
        coordinates: [
          [
            [0, 0],
            [1, 0],
            [1, 1],
            [0, 0],
          ],
        ],
      }).html,
    ).toContain('Polygon · 4 positions');
  });

  it('cuts long text, says how long it was, and gives it no link', () => {
    const shown = showValue('y'.repeat(1_000_000));
    expect(shown.html.length).toBeLessThan(300);
    expect(shown.html).toContain('(1\u202f000\u202f000 characters)');
    expect(shown.matchJson).toBeUndefined();
  });

  it('treats a plain object with a _bsontype key as data, not as a BSON value', () => {
    expect(showValue({ _bsontype: 'ObjectId', id: '<x>' })).toMatchObject({ kind: 'object' });
    expect(showValue({ _bsontype: 'ObjectId', id: '<x>' }).html).toContain('&lt;x&gt;');
  });
});

describe('storedType', () => {
  it('names the BSON type of a value decoded with its numbers as their classes', () => {
    expect(
      [new Int32(1), new Double(1), Long.fromNumber(1), Decimal128.fromString('1'), 'x', new Date(0), null, true, [1], { a: 1 }].map(
        storedType,
      ),
    ).toEqual(['int', 'double', 'long', 'decimal', 'string', 'date', 'null', 'bool', 'array', 'object']);
    expect(storedType({ type: 'Point', coordinates: [1, 2] })).toBe('geo');
    expect(storedType(ObjectId.createFromHexString('65f000000000000000000001'))).toBe('objectId');
  });
});

describe('kindOf and sameValueKey (the schema profile reads every sampled value with them)', () => {
  const values: unknown[] = [
    undefined,
    null,
    true,
    false,
    0,
    5,
    -1.5,
    Number.NaN,
    10n,
    '',
    '5',
    'd5',
    'n5',
    new Date(5),
    new Date('2024-05-01T00:00:00Z'),
    new Date(Number.NaN),
    ObjectId.createFromHexString('65f000000000000000000001'),
    new Int32(5),
    new Double(5),
    Long.fromNumber(5),
    Decimal128.fromString('5'),
    new Binary(Buffer.from('x')),
    [],
    [5],
    ['5'],
    {},
    { a: 5 },
    { a: '5' },
    { type: 'Point', coordinates: [1, 2] },
    { type: 'Point', coordinates: [2, 1] },
    {
      type: 'LineString',
      coordinates: [
        [1, 2],
        [3, 4],
      ],
    },
  ];

  it('gives the kind showValue gives', () => {
    for (const value of values) expect(kindOf(value), String(value)).toBe(showValue(value).kind);
  });

  it('tells values apart as a reader does: a number is one value whatever its BSON width, but not its text', () => {
    const key = (value: unknown) => sameValueKey(value);
    expect(key(5)).toBe(key(new Int32(5)));
    expect(key(5)).toBe(key(new Double(5)));
    const distinct = new Set(values.map(key));
    // 5, Int32 5 and Double 5 are one value; every other value of the list is its own.
    expect(distinct.size).toBe(values.length - 2);
    expect(key({ type: 'Point', coordinates: [1, 2] })).toBe(key({ type: 'Point', coordinates: [1, 2] }));
  });
});
