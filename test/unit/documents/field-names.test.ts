import { ObjectId } from 'mongodb';
import { describe, expect, it } from 'vitest';
import { assertStorableFieldName, assertStorableFieldNames } from '../../../src/documents/field-names.js';
import { ApiError } from '../../../src/errors.js';

function refusal(fn: () => void): { code: string; message: string } | null {
  try {
    fn();
    return null;
  } catch (error) {
    if (!(error instanceof ApiError)) throw error;
    return { code: error.code, message: error.message };
  }
}

describe('assertStorableFieldNames', () => {
  it('accepts ordinary records, including unusual but harmless names', () => {
    const record = {
      name: 'x',
      "it's": 1,
      'say "hi"': 2,
      'a b': [1, { 'ü-ß': null }],
      nested: { deep: { 'x<y>': true } },
      id: new ObjectId(),
    };
    expect(refusal(() => assertStorableFieldNames(record))).toBeNull();
  });

  it.each([
    [{ 'k\u0001': 1 }, 'k\u0001'],
    [{ a: { 'b\n': 1 } }, 'a.b\n'],
    [{ a: [0, { 'c\t': 1 }] }, 'a.1.c\t'],
    [[{ ok: 1 }, { 'q\u007f': 1 }], '1.q\u007f'],
    [{ 'nul\u0000': 1 }, 'nul\u0000'],
  ])('refuses a control character in %j and names the path', (value, path) => {
    const r = refusal(() => assertStorableFieldNames(value));
    expect(r?.code).toBe('invalid_field_name');
    expect(r?.message).toContain(JSON.stringify(path));
  });

  it('does not look inside values that are not sub-documents', () => {
    expect(refusal(() => assertStorableFieldNames({ text: 'a "quoted"\nline\u0001', when: new Date(0) }))).toBeNull();
  });
});

describe('assertStorableFieldName', () => {
  it('checks a single name or dotted path', () => {
    expect(refusal(() => assertStorableFieldName('a.b.c'))).toBeNull();
    expect(refusal(() => assertStorableFieldName('a."b"'))).toBeNull();
    expect(refusal(() => assertStorableFieldName('a.b\r'))?.code).toBe('invalid_field_name');
  });
});
