import type { DocumentWriter } from './document.js';
import { envelopeHeadEntries, RESULTS_KEY } from './envelope.js';
import { doubleText } from './double-text.js';
import { IntegralDouble, type EnvelopeHead, type PlainValue } from './types.js';
import { encodeXmlName } from './xml-name.js';

/**
 * XML in the shape of Django REST framework's XMLRenderer: a `<root>` element, object keys as
 * child elements, array items as repeated `<list-item>` elements, null as an empty element.
 * Unlike DRF, booleans are `true`/`false` (the JSON spelling) and key names are always valid
 * (see xml-name.ts). Elements are always written as start/end pairs, never self-closed, so an
 * empty value looks the same whether rendered whole or streamed.
 */

const PROLOG = '<?xml version="1.0" encoding="utf-8"?>\n';
const ROOT = 'root';
const LIST_ITEM = 'list-item';

/**
 * Markup characters, '\r' (a parser would normalise a raw one to '\n'), and everything that is
 * not an XML 1.0 Char: C0 controls other than tab/LF/CR, U+FFFE/U+FFFF and lone surrogates
 * (matched as UTF-16 code units; the regex has no `u` flag on purpose).
 */
const TEXT_SPECIALS =
  /[&<>\r\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

function replaceTextSpecial(char: string): string {
  switch (char) {
    case '&':
      return '&amp;';
    case '<':
      return '&lt;';
    case '>':
      return '&gt;'; // also keeps "]]>" out of text content
    case '\r':
      return '&#13;';
    default:
      return '\uFFFD'; // not representable in XML 1.0 at all, not even as a character reference
  }
}

export function escapeXmlText(text: string): string {
  return text.replace(TEXT_SPECIALS, replaceTextSpecial);
}

function element(name: string, content: string): string {
  return `<${name}>${content}</${name}>`;
}

/** The content of the element that holds `value`. */
function xmlContent(value: PlainValue): string {
  if (value === null) return '';
  switch (typeof value) {
    case 'string':
      return escapeXmlText(value);
    case 'number':
    case 'boolean':
      return String(value);
  }
  if (value instanceof IntegralDouble) return doubleText(value.value);
  if (Array.isArray(value)) {
    let out = '';
    for (const item of value) out += element(LIST_ITEM, xmlContent(item));
    return out;
  }
  let out = '';
  for (const key of Object.keys(value)) out += element(encodeXmlName(key), xmlContent(value[key] as PlainValue));
  return out;
}

export const xmlDocument: DocumentWriter = {
  whole: (value) => PROLOG + element(ROOT, xmlContent(value)),

  envelopeOpen: (head: EnvelopeHead) => {
    let out = `${PROLOG}<${ROOT}>`;
    for (const [key, value] of envelopeHeadEntries(head)) out += element(encodeXmlName(key), xmlContent(value));
    return `${out}<${encodeXmlName(RESULTS_KEY)}>`;
  },

  envelopeRecord: (record) => element(LIST_ITEM, xmlContent(record)),

  envelopeClose: () => `</${encodeXmlName(RESULTS_KEY)}></${ROOT}>`,
};
