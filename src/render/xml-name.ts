/**
 * Object keys become XML element names, but a stored document's keys are arbitrary strings
 * (`$where`, `a b`, `1abc`, `<script>`, ""). Invalid characters are escaped as `_xHHHH_`
 * (`_xHHHHHHHH_` above U+FFFF), the scheme of .NET's XmlConvert.EncodeName, so every emitted name
 * is valid and decodeXmlName recovers the key exactly.
 *
 * Deliberately stricter than the XML 1.0 Name production, for parser compatibility:
 * - ':' is escaped (it would make the name a namespace-prefixed QName);
 * - characters above U+FFFF are escaped (allowed since XML 1.0 5th edition only, and several
 *   parsers still reject them);
 * - a leading "xml" (any case) is escaped, since such names are reserved.
 * To keep decoding unambiguous, an '_' that is followed by 'x' is itself escaped (`_x005F_`), so
 * the only `_x` sequences in an encoded name start escapes.
 */

/** The empty key has no characters to escape; `_x_` can never come out of the encoder otherwise. */
const EMPTY_NAME = '_x_';

const ESCAPE = /_x([0-9A-Fa-f]{8}|[0-9A-Fa-f]{4})_/g;

/** XML 1.0 NameStartChar, without ':' and limited to the BMP (see above). */
function isNameStartChar(code: number): boolean {
  return (
    (code >= 0x41 && code <= 0x5a) || // A-Z
    code === 0x5f || // _
    (code >= 0x61 && code <= 0x7a) || // a-z
    (code >= 0xc0 && code <= 0xd6) ||
    (code >= 0xd8 && code <= 0xf6) ||
    (code >= 0xf8 && code <= 0x2ff) ||
    (code >= 0x370 && code <= 0x37d) ||
    (code >= 0x37f && code <= 0x1fff) ||
    (code >= 0x200c && code <= 0x200d) ||
    (code >= 0x2070 && code <= 0x218f) ||
    (code >= 0x2c00 && code <= 0x2fef) ||
    (code >= 0x3001 && code <= 0xd7ff) ||
    (code >= 0xf900 && code <= 0xfdcf) ||
    (code >= 0xfdf0 && code <= 0xfffd)
  );
}

/** XML 1.0 NameChar, with the same restrictions. */
function isNameChar(code: number): boolean {
  return (
    isNameStartChar(code) ||
    code === 0x2d || // -
    code === 0x2e || // .
    (code >= 0x30 && code <= 0x39) || // 0-9
    code === 0xb7 ||
    (code >= 0x300 && code <= 0x36f) ||
    (code >= 0x203f && code <= 0x2040)
  );
}

function escapeCodePoint(code: number): string {
  const hex = code.toString(16).toUpperCase();
  return `_x${hex.padStart(code > 0xffff ? 8 : 4, '0')}_`;
}

/** A valid XML element name for any string; decodeXmlName(encodeXmlName(s)) === s. */
export function encodeXmlName(name: string): string {
  if (name === '') return EMPTY_NAME;
  const reservedPrefix = /^xml/i.test(name);
  let out = '';
  let index = 0;
  while (index < name.length) {
    // codePointAt pairs surrogates; a lone surrogate comes back as itself and is escaped below.
    const code = name.codePointAt(index) as number;
    const width = code > 0xffff ? 2 : 1;
    const first = index === 0;
    const valid = first ? isNameStartChar(code) && !reservedPrefix : isNameChar(code);
    const ambiguousUnderscore = code === 0x5f && name.charCodeAt(index + 1) === 0x78; // "_x"
    out += valid && !ambiguousUnderscore ? name.slice(index, index + width) : escapeCodePoint(code);
    index += width;
  }
  return out;
}

/** Inverse of encodeXmlName; also decodes names written by XmlConvert.EncodeName. */
export function decodeXmlName(name: string): string {
  if (name === EMPTY_NAME) return '';
  return name.replace(ESCAPE, (escape, hex: string) => {
    const code = Number.parseInt(hex, 16);
    return code <= 0x10ffff ? String.fromCodePoint(code) : escape;
  });
}
