/**
 * Record bodies as JSON text, parsed so that a number keeps the BSON type its literal asks for,
 * as MongoDB's own Extended JSON parsers read relaxed JSON:
 * - a literal with a fraction or an exponent (`3.0`, `1e3`, `-0.0`) is a double;
 * - an integer literal is an int32, an int64 beyond int32, a double beyond int64.
 * JSON.parse forgets how a number was written (`3.0` and `3` are both the number 3, which the
 * driver stores as an int32), so such literals are rewritten, before JSON.parse sees them, into
 * the canonical Extended JSON that says the same thing (`{"$numberDouble": "3.0"}`,
 * `{"$numberLong": "3000000000"}`), and extended-json.ts revives them with every other wrapper.
 * A literal whose value is not whole (`2.5`) is left alone: the driver stores that number as a
 * double anyway.
 * The result is still plain JSON; it differs from JSON.parse's only in those numbers.
 *
 * Why a rewrite and not a reviver: Node 20's reviver is not given the literal's text (only
 * V8 11.4+ passes `context.source`), and a reviver is called for every value of the body, which
 * costs more than this scan on the bodies that need it. Bodies with no digit followed by `.`,
 * `e` or `E` and no run of ten digits hold no literal to rewrite and go straight to JSON.parse.
 *
 * The rewrite never makes text that is not JSON parse: only a complete, valid number literal
 * outside strings is replaced, and by a value (an object), which is valid exactly where the
 * number was. A body that fails to parse is parsed as it was sent, so that the error describes
 * the caller's text.
 */

/** Something a rewrite may be needed for: a digit before `.`/`e`/`E`, or ten digits in a row. */
const MAY_NEED_REWRITE = /\d[.eE]|\d{10}/;
/** A complete JSON number literal (RFC 8259): the rewrite leaves anything else to JSON.parse. */
const JSON_NUMBER = /^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?$/;

const INT32_MIN = -(2n ** 31n);
const INT32_MAX = 2n ** 31n - 1n;
const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;
/** Up to nine digits every integer is an int32. */
const SURE_INT32_DIGITS = 9;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const MINUS = 0x2d;
const DIGIT_0 = 0x30;
const DIGIT_9 = 0x39;

const isDigit = (code: number): boolean => code >= DIGIT_0 && code <= DIGIT_9;

/** Characters a number literal may contain (digits, sign, point, exponent). */
function isNumberChar(code: number): boolean {
  return isDigit(code) || code === MINUS || code === 0x2b || code === 0x2e || code === 0x65 || code === 0x45;
}

/** JSON.parse for a record body, with its number literals typed as described above. */
export function parseRecordJson(text: string): unknown {
  if (!MAY_NEED_REWRITE.test(text)) return JSON.parse(text);
  const rewritten = typeNumberLiterals(text);
  if (rewritten === text) return JSON.parse(text);
  try {
    return JSON.parse(rewritten);
  } catch {
    // The caller's text is not JSON: say what is wrong with it, not with the rewrite.
    return JSON.parse(text);
  }
}

/**
 * The Extended JSON wrapper a literal stands for, or undefined when JSON.parse already reads it
 * right (an int32, or a double whose value is not whole).
 */
export function typedLiteral(literal: string): string | undefined {
  if (!JSON_NUMBER.test(literal)) return undefined;
  const digits = literal.charCodeAt(0) === MINUS ? literal.length - 1 : literal.length;
  // A fraction that is not whole (`2.5`) is a JavaScript number the driver already stores as a
  // double: only whole values (`3.0`, `1e3`, `-0.0`) need saying so. Most measured values are
  // such fractions, and leaving them alone keeps their records free of wrapper objects, which
  // cost the driver more to store than numbers.
  if (/[.eE]/.test(literal)) return Number.isInteger(Number(literal)) ? `{"$numberDouble":"${literal}"}` : undefined;
  if (digits <= SURE_INT32_DIGITS) return undefined;
  const value = BigInt(literal);
  if (value >= INT32_MIN && value <= INT32_MAX) return undefined;
  if (value >= INT64_MIN && value <= INT64_MAX) return `{"$numberLong":"${literal}"}`;
  return `{"$numberDouble":"${literal}"}`;
}

/**
 * The text with each number literal that is not an int32 replaced by its wrapper. Strings are
 * skipped whole (their closing quote found by indexOf); only the few characters between tokens
 * are looked at one by one. Unterminated strings end the scan: the text is then not JSON anyway.
 */
export function typeNumberLiterals(text: string): string {
  let out = '';
  let copiedTo = 0;
  let at = 0;
  const end = text.length;
  while (at < end) {
    const code = text.charCodeAt(at);
    if (code === QUOTE) {
      at = stringEnd(text, at);
      if (at < 0) break;
      continue;
    }
    if (code !== MINUS && !isDigit(code)) {
      at += 1;
      continue;
    }
    const literalEnd = numberEnd(text, at);
    if (literalEnd < 0) {
      // Plainly fine as JSON.parse reads it: skip without looking at it twice.
      at = -literalEnd;
      continue;
    }
    const wrapper = typedLiteral(text.slice(at, literalEnd));
    if (wrapper !== undefined) {
      out += text.slice(copiedTo, at) + wrapper;
      copiedTo = literalEnd;
    }
    at = literalEnd;
  }
  return copiedTo === 0 ? text : out + text.slice(copiedTo);
}

const DOT = 0x2e;

/**
 * The end of the number-like run that starts at `start`, negated when the run is certainly a
 * number JSON.parse already reads right: up to SURE_INT32_DIGITS digits with no fraction or
 * exponent, or a fraction with a non-zero digit after the point and no exponent (not whole, so
 * a double). Most literals of a body are one of these, and are then passed over without being
 * copied out of the text. Anything else (whole fractions, exponents, long integers, malformed
 * runs) is for typedLiteral to judge.
 */
function numberEnd(text: string, start: number): number {
  const end = text.length;
  let at = text.charCodeAt(start) === MINUS ? start + 1 : start;
  const digitsFrom = at;
  while (at < end && isDigit(text.charCodeAt(at))) at += 1;
  const intDigits = at - digitsFrom;
  // A leading zero is fine only alone ("0", "0.5"), as JSON has it.
  const plainInteger = intDigits > 0 && (intDigits === 1 || text.charCodeAt(digitsFrom) !== DIGIT_0);
  let sure = plainInteger && intDigits <= SURE_INT32_DIGITS;
  if (at < end && text.charCodeAt(at) === DOT) {
    at += 1;
    const fractionFrom = at;
    let nonZero = false;
    while (at < end && isDigit(text.charCodeAt(at))) {
      if (text.charCodeAt(at) !== DIGIT_0) nonZero = true;
      at += 1;
    }
    sure = plainInteger && at > fractionFrom && nonZero;
  }
  if (at < end && isNumberChar(text.charCodeAt(at))) {
    // An exponent, or something that is no JSON number at all.
    while (at < end && isNumberChar(text.charCodeAt(at))) at += 1;
    return at;
  }
  return sure ? -at : at;
}

/** The index after the string that opens at `open`, or -1 when it is not closed. */
function stringEnd(text: string, open: number): number {
  let from = open + 1;
  for (;;) {
    const close = text.indexOf('"', from);
    if (close < 0) return -1;
    let backslashes = 0;
    while (text.charCodeAt(close - 1 - backslashes) === BACKSLASH) backslashes += 1;
    // An odd number of backslashes escapes the quote; an even number are escaped pairs.
    if (backslashes % 2 === 0) return close + 1;
    from = close + 1;
  }
}
