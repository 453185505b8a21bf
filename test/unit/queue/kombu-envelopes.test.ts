import { describe, expect, it } from 'vitest';
import { UnsupportedEnvelopeError, decodeKombuEnvelopes, isKombuEnvelope } from '../../../src/queue/protocol/kombu-envelopes.js';

const env = (type: string, value: unknown) => ({ __type__: type, __value__: value });

describe('kombu 5.3 JSON envelopes', () => {
  it('decodes each type into the plain value kombu 5.2.4 would have sent', () => {
    expect(decodeKombuEnvelopes(env('datetime', '2024-06-19T19:23:24.611430+00:00') as never)).toBe('2024-06-19T19:23:24.611430Z');
    expect(decodeKombuEnvelopes(env('datetime', '2024-06-19T19:23:24') as never)).toBe('2024-06-19T19:23:24');
    expect(decodeKombuEnvelopes(env('date', '2024-06-19') as never)).toBe('2024-06-19T00:00:00');
    expect(decodeKombuEnvelopes(env('time', '12:30:00') as never)).toBe('12:30:00');
    expect(decodeKombuEnvelopes(env('decimal', '3.14') as never)).toBe('3.14');
    expect(decodeKombuEnvelopes(env('uuid', { hex: '1B4E28BA2FA111D2883F0016D3CCA427', version: 1 }) as never)).toBe(
      '1b4e28ba-2fa1-11d2-883f-0016d3cca427',
    );
    expect(decodeKombuEnvelopes(env('bytes', 'héllo') as never)).toBe('héllo');
    expect(decodeKombuEnvelopes(env('base64', 'AAEC') as never)).toBe('AAEC');
  });

  it('decodes nested envelopes in arrays and objects and leaves other objects alone', () => {
    const input = { a: [1, env('decimal', '2')], b: { __type__: 'x', other: 1 }, c: { __value__: 1 } };
    expect(decodeKombuEnvelopes(input as never)).toEqual({ a: [1, '2'], b: { __type__: 'x', other: 1 }, c: { __value__: 1 } });
  });

  it('keeps a "__proto__" key as a key, at any depth, instead of making it the prototype', () => {
    const decoded = decodeKombuEnvelopes(JSON.parse('{"__proto__": {"isAdmin": true}, "a": [{"__proto__": 1}]}')) as Record<
      string,
      unknown
    >;
    expect(Object.keys(decoded)).toEqual(['__proto__', 'a']);
    expect(Object.getPrototypeOf(decoded)).toBe(Object.prototype);
    expect(Object.getOwnPropertyDescriptor(decoded, '__proto__')?.value).toEqual({ isAdmin: true });
    expect(decoded.isAdmin).toBeUndefined();
    expect(Object.keys((decoded.a as object[])[0]!)).toEqual(['__proto__']);
  });

  it('recognises only objects with exactly the two keys', () => {
    expect(isKombuEnvelope(env('uuid', 'x'))).toBe(true);
    expect(isKombuEnvelope({ __type__: 'uuid', __value__: 'x', more: 1 })).toBe(false);
    expect(isKombuEnvelope(['__type__', '__value__'])).toBe(false);
  });

  it('refuses unknown types and malformed values, as kombu does', () => {
    expect(() => decodeKombuEnvelopes(env('pickle', 'x') as never)).toThrow(UnsupportedEnvelopeError);
    expect(() => decodeKombuEnvelopes(env('uuid', { hex: 'zz' }) as never)).toThrow(UnsupportedEnvelopeError);
    expect(() => decodeKombuEnvelopes(env('date', 5) as never)).toThrow(UnsupportedEnvelopeError);
  });
});
