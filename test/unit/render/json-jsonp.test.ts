import { Decimal128, Long, ObjectId } from 'mongodb';
import { describe, expect, it } from 'vitest';
import { ApiError } from '../../../src/errors.js';
import { contentTypeFor, FORMATS, isFormat, isValidJsonpCallback, renderValue } from '../../../src/render/index.js';
import { FakeSink, pageContext, unwrapJsonp } from './support.js';

describe('content types', () => {
  it('gives each format its exact Content-Type', () => {
    expect(contentTypeFor('json')).toBe('application/json; charset=utf-8');
    expect(contentTypeFor('jsonp')).toBe('application/javascript; charset=utf-8');
    expect(contentTypeFor('xml')).toBe('application/xml; charset=utf-8');
    expect(contentTypeFor('api')).toBe('text/html; charset=utf-8');
  });

  it('knows exactly the six formats', () => {
    expect([...FORMATS].sort()).toEqual(['api', 'csv', 'json', 'jsonp', 'ndjson', 'xml']);
    expect(isFormat('xml')).toBe(true);
    expect(isFormat('yaml')).toBe(false);
    expect(isFormat('JSON')).toBe(false);
    expect(isFormat(undefined)).toBe(false);
  });

  it('renderValue sets status and Content-Type for every format', () => {
    for (const format of FORMATS) {
      const sink = new FakeSink();
      renderValue(sink, format, 201, { ok: true }, pageContext());
      expect(sink.statusCode).toBe(201);
      expect(sink.headers.get('content-type')).toBe(contentTypeFor(format));
      expect(sink.ended).toBe(true);
    }
  });
});

describe('JSON', () => {
  it('round-trips a value, with BSON values converted', () => {
    const sink = new FakeSink();
    const value = {
      _id: new ObjectId('65a1b2c3d4e5f60718293a4b'),
      when: new Date(Date.UTC(2023, 6, 14, 12, 0, 0)),
      price: Decimal128.fromString('19.99'),
      views: Long.fromNumber(12),
      text: 'quote " backslash \\ newline \n unicode é ✓',
      list: [1, null, false, { deep: [] }],
    };
    renderValue(sink, 'json', 200, value, pageContext());
    expect(JSON.parse(sink.body)).toEqual({
      _id: '65a1b2c3d4e5f60718293a4b',
      when: '2023-07-14T12:00:00.000Z',
      price: '19.99',
      views: 12,
      text: 'quote " backslash \\ newline \n unicode é ✓',
      list: [1, null, false, { deep: [] }],
    });
  });

  it('renders top-level scalars and arrays', () => {
    for (const value of [null, 0, 'text', [1, 2], true]) {
      const sink = new FakeSink();
      renderValue(sink, 'json', 200, value, pageContext());
      expect(JSON.parse(sink.body)).toEqual(value);
    }
  });
});

describe('JSONP callback names', () => {
  it.each(['callback', 'cb', 'jQuery123_456', 'jQuery123.cb', 'a.b.c', '$', '_', '$jsonp._cb1', 'x'.repeat(128)])('accepts %s', (name) => {
    expect(isValidJsonpCallback(name)).toBe(true);
  });

  it.each([
    '',
    ' callback',
    'a b',
    'alert(1)',
    'alert(document.cookie)//',
    'x;alert(1)',
    'a..b',
    '.a',
    'a.',
    '1abc',
    'a.1b',
    'a-b',
    'a[0]',
    'a/*x*/',
    'été',
    'cb\u2028',
    'default',
    'new',
    'a.delete',
    'eval',
    'x'.repeat(129),
    // Sinks and ways to reach the Function constructor: calling them with our JSON runs code.
    'document.write',
    'document.writeln',
    'Function',
    'x.constructor.constructor',
    'a.constructor',
    'a.__proto__.b',
    'window.location.assign',
    'self.eval',
    'top.location.replace',
    'globalThis.setTimeout',
    'setInterval',
    'location.assign',
    'window.open',
    'Reflect.apply',
    'importScripts',
  ])('refuses %j', (name) => {
    expect(isValidJsonpCallback(name)).toBe(false);
  });
});

describe('JSONP bodies', () => {
  it('wraps the JSON in the named callback behind an empty comment', () => {
    const sink = new FakeSink();
    renderValue(sink, 'jsonp', 200, { a: [1, 'two'], b: null }, { ...pageContext(), callback: 'jQuery1.cb' });
    const { callback, json } = unwrapJsonp(sink.body);
    expect(sink.body.startsWith('/**/jQuery1.cb(')).toBe(true);
    expect(callback).toBe('jQuery1.cb');
    expect(JSON.parse(json)).toEqual({ a: [1, 'two'], b: null });
  });

  it('uses "callback" when no name is given', () => {
    const sink = new FakeSink();
    renderValue(sink, 'jsonp', 200, [1], pageContext());
    expect(unwrapJsonp(sink.body).callback).toBe('callback');
  });

  it('escapes U+2028 and U+2029, which older JavaScript treats as line ends', () => {
    const sink = new FakeSink();
    const value = { text: 'line\u2028separator\u2029paragraph' };
    renderValue(sink, 'jsonp', 200, value, pageContext());
    expect(sink.body).not.toMatch(/[\u2028\u2029]/);
    expect(sink.body).toContain('line\\u2028separator\\u2029paragraph');
    expect(JSON.parse(unwrapJsonp(sink.body).json)).toEqual(value);
  });

  it('refuses an unsafe callback with a 400 before writing anything', () => {
    const sink = new FakeSink();
    let caught: unknown;
    try {
      renderValue(sink, 'jsonp', 200, { a: 1 }, { ...pageContext(), callback: 'alert(1)//' });
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(ApiError);
    expect((caught as ApiError).status).toBe(400);
    expect((caught as ApiError).code).toBe('invalid_callback');
    expect(sink.statusCode).toBeUndefined();
    expect(sink.chunks).toEqual([]);
    expect(sink.ended).toBe(false);
  });
});
