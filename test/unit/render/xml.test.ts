import { XMLValidator } from 'fast-xml-parser';
import { ObjectId } from 'mongodb';
import { describe, expect, it } from 'vitest';
import { decodeXmlName, encodeXmlName, renderValue } from '../../../src/render/index.js';
import { FakeSink, pageContext, parseXml } from './support.js';

/** XML 1.0 Name (BMP, without ':'), written from the spec independently of the encoder. */
const NAME_START =
  'A-Z_a-z\\u00C0-\\u00D6\\u00D8-\\u00F6\\u00F8-\\u02FF\\u0370-\\u037D\\u037F-\\u1FFF\\u200C-\\u200D\\u2070-\\u218F\\u2C00-\\u2FEF\\u3001-\\uD7FF\\uF900-\\uFDCF\\uFDF0-\\uFFFD';
// The spec's NameChar ranges include combining marks (U+0300–U+036F) on purpose.
// eslint-disable-next-line no-misleading-character-class
const XML_NAME = new RegExp(`^[${NAME_START}][${NAME_START}\\-.0-9\\u00B7\\u0300-\\u036F\\u203F-\\u2040]*$`);

function renderXml(value: unknown): string {
  const sink = new FakeSink();
  renderValue(sink, 'xml', 200, value, pageContext());
  return sink.body;
}

/** Element names of a parsed document, depth first. */
function elementNames(node: unknown, into: string[] = []): string[] {
  if (node && typeof node === 'object') {
    for (const [key, child] of Object.entries(node)) {
      if (!Array.isArray(node)) into.push(key);
      elementNames(child, into);
    }
  }
  return into;
}

/** Deterministic PRNG so a failure reproduces. */
function mulberry32(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state + 0x6d2b79f5) | 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

describe('XML documents', () => {
  it('has an XML declaration and a <root> element', () => {
    const xml = renderXml({ a: 1 });
    expect(xml.startsWith('<?xml version="1.0" encoding="utf-8"?>\n<root>')).toBe(true);
    expect(xml.endsWith('</root>')).toBe(true);
    expect(XMLValidator.validate(xml)).toBe(true);
  });

  it('maps keys to elements, arrays to <list-item>, null to an empty element', () => {
    const xml = renderXml({
      count: 2,
      nothing: null,
      yes: true,
      no: false,
      ratio: 1.5,
      text: 'plain',
      list: [1, [2, 3], { k: 'v' }, null],
      empty: { inner: {} },
      id: new ObjectId('65a1b2c3d4e5f60718293a4b'),
    });
    expect(XMLValidator.validate(xml)).toBe(true);
    expect(parseXml(xml)).toEqual({
      '?xml': '',
      root: {
        count: '2',
        nothing: '',
        yes: 'true',
        no: 'false',
        ratio: '1.5',
        text: 'plain',
        list: { 'list-item': ['1', { 'list-item': ['2', '3'] }, { k: 'v' }, ''] },
        empty: { inner: '' },
        id: '65a1b2c3d4e5f60718293a4b',
      },
    });
  });

  it('renders top-level scalars, arrays and null', () => {
    expect(parseXml(renderXml('x'))).toEqual({ '?xml': '', root: 'x' });
    expect(parseXml(renderXml([1, 'b']))).toEqual({ '?xml': '', root: { 'list-item': ['1', 'b'] } });
    expect(parseXml(renderXml(null))).toEqual({ '?xml': '', root: '' });
  });

  it('escapes markup in text and replaces characters XML cannot carry', () => {
    const xml = renderXml({
      markup: 'a<b>&c]]>d</root>',
      controls: 'x\u0000y\u0001z\u000Bw\u001F',
      whitespace: 'a\tb\nc\rd\r\n',
      surrogates: 'lone\uD800 and \uDC00 pair \uD83D\uDE00',
      nonCharacters: '\uFFFE\uFFFF',
    });
    expect(XMLValidator.validate(xml)).toBe(true);
    expect(xml).not.toContain(']]>');
    expect(xml).not.toMatch(/[\u0000-\u0008\u000B\u000C\u000E-\u001F]/);
    expect(parseXml(xml)).toEqual({
      '?xml': '',
      root: {
        markup: 'a<b>&c]]>d</root>',
        controls: 'x\uFFFDy\uFFFDz\uFFFDw\uFFFD',
        whitespace: 'a\tb\nc\rd\r\n',
        surrogates: 'lone\uFFFD and \uFFFD pair \uD83D\uDE00',
        nonCharacters: '\uFFFD\uFFFD',
      },
    });
  });
});

describe('XML element names', () => {
  it.each([
    ['$where', '_x0024_where'],
    ['a b', 'a_x0020_b'],
    ['1x', '_x0031_x'],
    ['<script>', '_x003C_script_x003E_'],
    ['', '_x_'],
    ['xmlns', '_x0078_mlns'],
    ['XMLthing', '_x0058_MLthing'],
    ['a:b', 'a_x003A_b'],
    ['-a', '_x002D_a'],
    ['_x0041_', '_x005F_x0041_'],
    ['a_xb', 'a_x005F_xb'],
    ['\uD83D\uDE00', '_x0001F600_'],
    ['lone\uD800', 'lone_xD800_'],
    ['normal_key-1.2', 'normal_key-1.2'],
    ['_id', '_id'],
    ['é', 'é'],
    ['数据', '数据'],
  ])('encodes %j as %j and decodes it back', (key, encoded) => {
    expect(encodeXmlName(key)).toBe(encoded);
    expect(decodeXmlName(encoded)).toBe(key);
  });

  it('decodes names encoded by .NET XmlConvert.EncodeName', () => {
    expect(decodeXmlName('Order_x0020_Details')).toBe('Order Details');
    expect(decodeXmlName('_x0031_23')).toBe('123');
  });

  it('emits only valid element names in documents, and the keys decode back', () => {
    const keys = ['$where', 'a b', '1x', '<script>', '', 'xml-ish', 'a:b', '_x0041_', 'é', '\uD83D\uDE00', 'ok'];
    const value: Record<string, number> = {};
    keys.forEach((key, index) => {
      value[key] = index;
    });
    const xml = renderXml(value);
    expect(XMLValidator.validate(xml)).toBe(true);
    expect(xml).not.toContain('<script>');
    expect(xml).not.toContain('<$where>');
    const root = (parseXml(xml) as { root: Record<string, string> }).root;
    for (const name of Object.keys(root)) expect(name).toMatch(XML_NAME);
    const decoded = Object.fromEntries(Object.entries(root).map(([name, text]) => [decodeXmlName(name), Number(text)]));
    expect(decoded).toEqual(value);
  });

  it('encodes nested keys as well', () => {
    const xml = renderXml({ outer: [{ 'a b': { $gt: 1 } }] });
    const names = elementNames(parseXml(xml));
    expect(names).toEqual(['?xml', 'root', 'outer', 'list-item', 'a_x0020_b', '_x0024_gt']);
  });

  it('round-trips random keys and always yields a valid name', () => {
    const alphabet = [
      'a',
      'm',
      'l',
      'x',
      'X',
      '_',
      '0',
      '5',
      'F',
      '$',
      ' ',
      ':',
      '-',
      '.',
      'é',
      '\u0300',
      '\u00B7',
      '\uD83D\uDE00',
      '\uD800',
      '\uDC00',
      '\u0000',
      '<',
      '&',
    ];
    const random = mulberry32(20240517);
    for (let run = 0; run < 3000; run += 1) {
      const length = Math.floor(random() * 9);
      let key = '';
      for (let index = 0; index < length; index += 1) key += alphabet[Math.floor(random() * alphabet.length)];
      const encoded = encodeXmlName(key);
      expect(encoded, JSON.stringify(key)).toMatch(XML_NAME);
      expect(encoded.toLowerCase().startsWith('xml'), JSON.stringify(key)).toBe(false);
      expect(decodeXmlName(encoded), JSON.stringify(key)).toBe(key);
    }
  });
});
