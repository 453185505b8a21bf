import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { isLosslessNumber, parse as losslessParse, LosslessNumber } from 'lossless-json';
import { exactJson, parseExactJson, parseExactJsonBody } from '../../../src/queue/protocol/exact-numbers.js';
import { ApiError } from '../../../src/errors.js';
import { MAX_NUMBER_LITERAL_LENGTH } from '../../../src/lib/json-number-literals.js';
import { pythonRepr } from '../../../src/queue/protocol/python-repr.js';

/** A JSON number literal of any size: an integer, or one with a fraction and/or an exponent. */
const numberLiteral = fc
  .tuple(
    fc.boolean(),
    fc.oneof(fc.constant('0'), fc.stringMatching(/^[1-9][0-9]{0,24}$/)),
    fc.option(fc.stringMatching(/^[0-9]{1,6}$/), { nil: undefined }),
    fc.option(fc.integer({ min: -400, max: 400 }), { nil: undefined }),
  )
  .map(
    ([minus, whole, fraction, exponent]) =>
      `${minus ? '-' : ''}${whole}${fraction === undefined ? '' : `.${fraction}`}${exponent === undefined ? '' : `e${exponent}`}`,
  );

/** How Python's json module reads a literal: an exact int, or a float. */
function pythonValue(literal: string): { kind: 'int'; value: bigint } | { kind: 'float'; value: number } {
  return /[.eE]/.test(literal) ? { kind: 'float', value: Number(literal) } : { kind: 'int', value: BigInt(literal) };
}

/** Every number literal of a JSON text, in order (lossless-json hands each one's text over). */
function literalsOf(text: string): string[] {
  const found: string[] = [];
  losslessParse(text, null, (literal: string) => {
    found.push(literal);
    return literal;
  });
  return found;
}

describe('submitted task arguments', () => {
  it('reach Python with the same type and value for every number literal', () => {
    fc.assert(
      fc.property(fc.array(numberLiteral, { minLength: 1, maxLength: 8 }), (literals) => {
        const text = `{"args":[${literals.join(',')}],"kwargs":{"n":${literals[0]}}}`;
        const written = literalsOf(exactJson(parseExactJson(text)));
        const read = [...literals, literals[0] as string].map(pythonValue);
        expect(written.map(pythonValue)).toEqual(read);
      }),
    );
  });

  it('read as JSON.parse reads them, for any JSON', () => {
    fc.assert(
      fc.property(fc.json(), (text) => {
        expect(JSON.parse(exactJson(parseExactJson(text)))).toEqual(JSON.parse(text));
      }),
    );
  });

  it('keep only the literals JSON.parse would change', () => {
    const value = parseExactJson('[3.0, 2.5, 7, 9007199254740993, 9007199254740991, 1e3, 1.5e3, -0.0, 1e400]') as unknown[];
    expect(value.map((item) => (isLosslessNumber(item) ? `kept ${item.value}` : item))).toEqual([
      'kept 3.0',
      2.5,
      7,
      'kept 9007199254740993',
      9007199254740991,
      'kept 1e3',
      'kept 1.5e3',
      'kept -0.0',
      'kept 1e400',
    ]);
  });

  it('take the last of a repeated key and keep "__proto__" a key, as JSON.parse does', () => {
    const value = parseExactJson('{"a": 1.0, "a": 2.0, "__proto__": {"polluted": 3.0}}') as Record<string, unknown>;
    expect(Object.keys(value)).toEqual(['a', '__proto__']);
    expect((value.a as LosslessNumber).value).toBe('2.0');
    expect(Object.getPrototypeOf(value)).toBe(Object.prototype);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it("refuse text that is not JSON with JSON.parse's own error", () => {
    const text = '{"args": [3.0,]}';
    let expected: unknown;
    try {
      JSON.parse(text);
    } catch (error) {
      expected = error;
    }
    expect(() => parseExactJson(text)).toThrow(expected as Error);
  });

  it('are shown in argsrepr as Python shows them', () => {
    const args = parseExactJson('[3.0, 1e3, 1.5e300, -0.0, 1e400, -1e400, 12345678901234567890, 2.5, 1e16, 9999999999999998.0]') as never[];
    expect(pythonRepr(args)).toBe('[3.0, 1000.0, 1.5e+300, -0.0, inf, -inf, 12345678901234567890, 2.5, 1e+16, 9999999999999998.0]');
  });
});

describe('submission bodies', () => {
  it('refuse a 15,000,000-digit integer as too long, naming its field, before reading any literal', () => {
    let refusal: unknown;
    try {
      parseExactJsonBody(`{"args": [1, ${'7'.repeat(15_000_000)}], "kwargs": {}}`);
    } catch (error) {
      refusal = error;
    }
    expect(refusal).toBeInstanceOf(ApiError);
    expect(refusal).toMatchObject({ status: 400, code: 'number_too_long', detail: { path: 'args.1', limit: MAX_NUMBER_LITERAL_LENGTH } });
  });

  it('keep literals up to the bound', () => {
    const literal = '9'.repeat(MAX_NUMBER_LITERAL_LENGTH);
    expect((parseExactJsonBody(`{"args": [${literal}]}`) as { args: LosslessNumber[] }).args[0]!.value).toBe(literal);
  });

  it('of integers up to 2^53 are read by JSON.parse alone; beyond, literal by literal', () => {
    const ints = Array.from({ length: 10_000 }, (_, i) => 100_000_000_000 + i);
    expect(parseExactJsonBody(JSON.stringify({ args: ints }))).toEqual({ args: ints });
    const mixed = parseExactJsonBody(`{"args": [${ints.join(',')}, 9007199254740993]}`) as { args: unknown[] };
    expect(mixed.args[0]).toBe(100_000_000_000);
    expect(mixed.args[10_000]).toEqual(new LosslessNumber('9007199254740993'));
  });
});
