import { describe, expect, it } from 'vitest';
import { pythonJsonDumps, toJsonValue } from '../../../src/queue/protocol/python-json.js';
import { pythonRepr } from '../../../src/queue/protocol/python-repr.js';

describe('pythonRepr', () => {
  it('writes Python literals', () => {
    expect(pythonRepr([2, 2])).toBe('[2, 2]');
    expect(pythonRepr({})).toBe('{}');
    expect(pythonRepr([null, true, false, 1.5, 'a'])).toBe("[None, True, False, 1.5, 'a']");
    expect(pythonRepr({ k: { n: [] } })).toBe("{'k': {'n': []}}");
  });

  it('quotes strings like Python', () => {
    expect(pythonRepr("it's")).toBe(`"it's"`);
    expect(pythonRepr(`both ' and "`)).toBe(`'both \\' and "'`);
    expect(pythonRepr('a\nb\\c')).toBe("'a\\nb\\\\c'");
    expect(pythonRepr('\u0001')).toBe("'\\x01'");
    expect(pythonRepr('é')).toBe("'é'");
  });

  it('truncates at 1024 characters', () => {
    const text = pythonRepr(['x'.repeat(2000)]);
    expect(text).toHaveLength(1024);
    expect(text.endsWith('...')).toBe(true);
  });
});

describe('pythonJsonDumps', () => {
  it("uses Python's separators and ensure_ascii escapes", () => {
    expect(pythonJsonDumps(4)).toBe('4');
    expect(pythonJsonDumps('hi')).toBe('"hi"');
    expect(pythonJsonDumps(null)).toBe('null');
    expect(pythonJsonDumps({ a: 1, b: [1, 2] })).toBe('{"a": 1, "b": [1, 2]}');
    expect(pythonJsonDumps('é€\u007f')).toBe('"\\u00e9\\u20ac\u007f"');
  });

  it('converts JS-only values the way the worker stores them', () => {
    expect(toJsonValue(undefined)).toBeNull();
    expect(toJsonValue(new Date(Date.UTC(2024, 0, 1)))).toBe('2024-01-01T00:00:00Z');
    expect(toJsonValue(new Date(Date.UTC(2024, 0, 1, 0, 0, 0, 5)))).toBe('2024-01-01T00:00:00.005Z');
    expect(toJsonValue({ a: undefined, b: 1, f: () => 1 })).toEqual({ b: 1 });
    expect(toJsonValue(new Map([['k', 1]]))).toEqual({ k: 1 });
    expect(toJsonValue(10n)).toBe(10);
    expect(toJsonValue(Number.NaN)).toBeNull();
  });

  it('refuses circular structures', () => {
    const a: Record<string, unknown> = {};
    a.self = a;
    expect(() => pythonJsonDumps(a)).toThrow(TypeError);
  });
});
