import { describe, expect, it } from 'vitest';
import { describeIndex, parseIndexDefinition } from '../../../src/documents/index-spec.js';
import { ApiError } from '../../../src/errors.js';

const refusal = (body: unknown): string => {
  try {
    parseIndexDefinition(body);
  } catch (err) {
    if (err instanceof ApiError) return `${err.status} ${err.code}`;
    throw err;
  }
  return 'accepted';
};

describe('index definitions', () => {
  it('keeps the key order of the object form and of the list form', () => {
    expect(parseIndexDefinition({ keys: { b: 1, a: -1 } }).keys).toEqual([
      ['b', 1],
      ['a', -1],
    ]);
    expect(
      parseIndexDefinition({
        keys: [
          ['z', 'text'],
          ['y', 1],
        ],
      }).keys,
    ).toEqual([
      ['z', 'text'],
      ['y', 1],
    ]);
  });

  it('passes the options on', () => {
    expect(
      parseIndexDefinition({
        keys: { t: 1 },
        name: 'ttl',
        expireAfterSeconds: 60,
        sparse: true,
        partialFilterExpression: { t: { $exists: true } },
      }),
    ).toEqual({ keys: [['t', 1]], name: 'ttl', expireAfterSeconds: 60, sparse: true, partialFilterExpression: { t: { $exists: true } } });
    expect(parseIndexDefinition({ keys: { e: 1 }, unique: true }).unique).toBe(true);
  });

  it('revives Extended JSON in a partial filter', () => {
    const { partialFilterExpression } = parseIndexDefinition({
      keys: { t: 1 },
      partialFilterExpression: { t: { $gt: { $date: '2024-01-01T00:00:00Z' } } },
    });
    expect((partialFilterExpression?.t as { $gt: unknown }).$gt).toBeInstanceOf(Date);
  });

  it.each([
    [undefined, '400 invalid_body'],
    [[], '400 invalid_body'],
    [{}, '400 invalid_index'],
    [{ keys: {} }, '400 invalid_index'],
    [{ keys: [] }, '400 invalid_index'],
    [{ keys: { a: 2 } }, '400 invalid_index'],
    [{ keys: { a: '1' } }, '400 invalid_index'],
    [{ keys: { $a: 1 } }, '400 invalid_index'],
    [{ keys: { 'a..b': 1 } }, '400 invalid_index'],
    [{ keys: { '': 1 } }, '400 invalid_index'],
    [
      {
        keys: [
          ['a', 1],
          ['a', -1],
        ],
      },
      '400 invalid_index',
    ],
    [{ keys: [['a']] }, '400 invalid_index'],
    [{ keys: ['a'] }, '400 invalid_index'],
    [{ keys: { a: 1 }, name: '' }, '400 invalid_index'],
    [{ keys: { a: 1 }, name: '_id_' }, '400 invalid_index'],
    [{ keys: { a: 1 }, name: '*' }, '400 invalid_index'],
    [{ keys: { a: 1 }, name: 'x'.repeat(129) }, '400 invalid_index'],
    [{ keys: { a: 1 }, unique: 'yes' }, '400 invalid_index'],
    [{ keys: { a: 1 }, expireAfterSeconds: -1 }, '400 invalid_index'],
    [{ keys: { a: 1 }, expireAfterSeconds: 1.5 }, '400 invalid_index'],
    [{ keys: { a: 1, b: 1 }, expireAfterSeconds: 60 }, '400 invalid_index'],
    [{ keys: { a: 'text' }, expireAfterSeconds: 60 }, '400 invalid_index'],
    [{ keys: { a: 'hashed' }, unique: true }, '400 invalid_index'],
    [{ keys: { a: 1 }, partialFilterExpression: { $where: 'x' } }, '400 forbidden_operator'],
    [{ keys: { a: 1 }, background: true }, '400 invalid_index'],
  ])('refuses %j', (body, expected) => {
    expect(refusal(body)).toBe(expected);
  });

  it('describes an index with the options that are set only', () => {
    expect(describeIndex({ v: 2, name: 'a_1', key: { a: 1 }, unique: false, sparse: true, ns: 'x.y' })).toEqual({
      name: 'a_1',
      key: { a: 1 },
      sparse: true,
    });
  });
});
