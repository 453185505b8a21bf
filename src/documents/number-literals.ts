/**
 * Record bodies as JSON text, parsed so that a number keeps the BSON type its literal asks for,
 * as MongoDB's own Extended JSON parsers read relaxed JSON:
 * - a literal with a fraction or an exponent (`3.0`, `1e3`, `-0.0`) is a double;
 * - an integer literal is an int32, an int64 beyond int32, a double beyond int64.
 * JSON.parse forgets how a number was written (`3.0` and `3` are both the number 3, which the
 * driver stores as an int32). What the parsed body holds for each literal:
 * - a whole double: a bson Double (or the wrapper `{"$numberDouble": ...}` the revival makes one);
 * - an integer up to 2^53 in size: the JavaScript number JSON.parse read, which is exact. One
 *   beyond int32 stands for an int64; the Long the driver needs to store it as one is made only
 *   when the record goes to the driver (int64-numbers.ts), per insert command, so that a body of
 *   hundreds of thousands of them is not held as as many Longs while it is read and stored;
 * - an int64 beyond 2^53: `{"$numberLong": "<digits>"}`, revived as a Long (rare);
 * - an integer beyond int64: a Double (rare).
 * Two steps find them:
 * - Whole doubles (`3.0`, `1e3`) are rewritten, before JSON.parse sees them, into a mark (a
 *   string ending with a character no string of the caller's ends with, see Mark) or, in the
 *   rare text where a string of the caller's could look the same, into the canonical Extended
 *   JSON that says the same thing (`{"$numberDouble": "3.0"}`), which extended-json.ts revives
 *   with every other wrapper. A literal whose value is not whole (`2.5`) is left alone: the
 *   driver stores that number as a double anyway. Only literals that may be whole are looked
 *   at, found by a regular expression (wrapWholeDoubles, parseMarked).
 * - After JSON.parse, every whole number in the value can only have come from an integer literal
 *   (whole doubles were marked), so the value is walked once, each mark made its Double and each
 *   number checked to be one JSON.parse cannot have changed (up to 2^53). The same walk notes
 *   whether the body is plain (nothing for the Extended JSON revival to do), which then does not
 *   walk it again. A numbers-heavy body (thousands of 12-digit integers) thus costs JSON.parse,
 *   one search and one walk that allocates nothing; no literal is copied out of the text.
 * Only when the walk meets a number JSON.parse may have changed (beyond 2^53: a literal of 16 or
 * more digits, or beyond a double) is the text scanned literal by literal, and parsed again: an
 * int64 beyond 2^53 is then rewritten to `{"$numberLong": "<digits>"}` so that no digit is lost,
 * an integer beyond int64 becomes a double, as documented.
 *
 * Every literal is judged by its characters (how many digits, which of them), never converted
 * through BigInt, so that the work stays linear in the body's size. A literal longer than
 * MAX_NUMBER_LITERAL_LENGTH, or one a double cannot hold (`1e999` overflows, `1e-999` would be
 * stored as 0), is a 400 naming its field (json-number-literals.ts).
 *
 * Why a rewrite and not a reviver: Node 20's reviver is not given the literal's text (only
 * V8 11.4+ passes `context.source`), and a reviver is called for every value of the body, which
 * costs more than this search on the bodies that need it.
 *
 * The rewrite never makes text that is not JSON parse: only a complete, valid number literal
 * outside strings is replaced, and by a value (an object), which is valid exactly where the
 * number was. A body that fails to parse is parsed as it was sent, so that the error describes
 * the caller's text.
 *
 * Task arguments are read differently (queue/protocol/exact-numbers.ts keeps literals as their
 * text) because they are written back out as JSON for a Python worker, whereas a record ends as
 * BSON, where the literal's BSON type, not its text, is what must survive.
 */
import { copyBefore } from '../lib/array-copy.js';
import { Double } from 'mongodb';
import {
  DIGIT_0,
  DOT,
  MAX_NUMBER_LITERAL_LENGTH,
  LOWER_E,
  MINUS,
  QUOTE,
  UPPER_E,
  isDigit,
  isNumberChar,
  literalError,
  numberRunEnd,
  type LiteralProblem,
  rangeProblem,
  stringEnd,
} from '../lib/json-number-literals.js';
import { isWrapperKeyName, MAX_NESTING_DEPTH, vouchForBody, vouchForStorableKeys } from './extended-json.js';
import { vouchInt64Free } from './int64-numbers.js';
import { wideInteger } from './int64-numbers.js';

export { MAX_NUMBER_LITERAL_LENGTH } from '../lib/json-number-literals.js';

/** A complete JSON number literal (RFC 8259): the rewrite leaves anything else to JSON.parse. */
const JSON_NUMBER = /^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?$/;

/** Up to nine digits every integer is an int32. */
const SURE_INT32_DIGITS = 9;
/** The largest integer a double holds exactly (2^53 - 1), and int64's bounds, as digits. */
const MAX_SAFE_DIGITS = String(Number.MAX_SAFE_INTEGER);
const INT64_MAX_DIGITS = '9223372036854775807';
const INT64_MIN_DIGITS = '9223372036854775808';
/** An integer literal of up to this many digits is below a double's largest value. */
const MAX_DOUBLE_DIGITS = 308;

const WHERE = 'the request body';

/**
 * A whole double's mark: the string `"<literal><end>"` in place of the literal, `end` a character
 * that ends no string of the caller's. Cheaper than the Extended JSON wrapper (JSON.parse makes
 * one string instead of an object and its key, and the walk after it makes the Double in place,
 * so the revival copies no record; parseFloat reads the literal and stops at `end`). `end` is:
 * - DEL as it is, in a text with no DEL and no backslash (so no escape that could write one):
 *   JSON.parse then reads the mark without decoding an escape;
 * - else NUL, written `\u0000`, in a text without that escape (the only way to write a NUL).
 * A text with both has its whole doubles wrapped instead.
 */
interface Mark {
  /** The character as it is written in the text. */
  written: string;
  code: number;
}

const DEL_MARK: Mark = { written: '\u007f', code: 0x7f };
const NUL_MARK: Mark = { written: '\\u0000', code: 0 };

/** What parseRecordJson learns of the text's characters before parsing it, each by one native search. */
interface TextFacts {
  /** No escape `\u0000`: no NUL in any key, and no string ends with NUL_MARK's end. */
  noNul: boolean;
  /** No backslash and no DEL: no escapes, no string holds a control character, none ends with DEL_MARK's end. */
  plainStrings: boolean;
  /** No escaped quote: no string holds JSON text (where whole doubles in value places are common, see parseMarked). */
  noQuotedJson: boolean;
}

function textFacts(text: string): TextFacts {
  const noBackslash = !text.includes('\\');
  return {
    noNul: noBackslash || !text.includes('\\u0000'),
    plainStrings: noBackslash && !text.includes('\u007f'),
    noQuotedJson: noBackslash || !text.includes('\\"'),
  };
}

/** The mark for whole doubles in a text, if one can be used. */
function markFor(facts: TextFacts): Mark | undefined {
  if (facts.plainStrings) return DEL_MARK;
  return facts.noNul ? NUL_MARK : undefined;
}

/** The Double a mark stands for: parseFloat reads its literal and stops at the mark's end. */
const markedDouble = (mark: string): Double => new Double(parseFloat(mark));

/** JSON.parse for a record body, with its number literals typed as described above. */
export function parseRecordJson(text: string): unknown {
  const facts = textFacts(text);
  const { noNul } = facts;
  const { value, mark } = parseMarked(text, markFor(facts), facts.noQuotedJson);
  const walk: Walk = {
    final: false,
    markCode: mark?.code ?? NO_MARK,
    safeKeys: noNul,
    plain: noNul,
    wrapperKeysOnly: true,
    wideIntegers: false,
    shareDoubles: text.length >= SHARE_DOUBLES_FROM,
  };
  let typed = typeParsedNumbers(value, 1, walk);
  if (typed === undefined) {
    // A literal of 16 digits or more, or beyond a double: each literal of the text is judged.
    Object.assign(walk, { final: true, markCode: NO_MARK, safeKeys: noNul, plain: noNul, wrapperKeysOnly: true, wideIntegers: false });
    typed = typeParsedNumbers(parseRewritten(typeNumberLiterals(text), text), 1, walk);
  }
  // The store then hands the body's records to the driver as they are (no walk for int64s).
  if (!walk.wideIntegers) vouchInt64Free(typed);
  if (walk.safeKeys) {
    vouchForBody(typed, walk.plain ? 'plain' : 'safe-keys');
    // With no backslash and no DEL, no string of the text, keys included, can hold a control
    // character (U+0000–U+001F, U+007F): JSON writes the first ones only as escapes.
    if (walk.wrapperKeysOnly && facts.plainStrings) vouchForStorableKeys(typed);
  }
  return typed;
}

/** A fraction of this many digits or more may be over the length bound, or underflow to 0. */
const LONG_FRACTION_DIGITS = 290;
const HALF_LONG = LONG_FRACTION_DIGITS / 2;

/**
 * Whether the text holds a run of LONG_FRACTION_DIGITS digits or more. Only every HALF_LONG-th
 * character is looked at first: such a run covers two of them in a row and every character
 * between them, so only where the characters from one sampled character back to the one before
 * it are all digits is the run measured. They are read backwards from the sampled one, and in
 * ordinary text a character that is no digit comes within a few (a body of 12-digit integers:
 * about 6 reads per sample). Linear, and a few tens of thousands of character reads per megabyte.
 */
function hasLongDigitRun(text: string): boolean {
  for (let at = HALF_LONG; at < text.length; at += HALF_LONG) {
    let from = at;
    while (from >= at - HALF_LONG && isDigit(text.charCodeAt(from))) from -= 1;
    if (from >= at - HALF_LONG) continue;
    // text[at - HALF_LONG, at] are all digits: measure their run.
    while (from >= 0 && isDigit(text.charCodeAt(from))) from -= 1;
    let to = at + 1;
    while (to < text.length && isDigit(text.charCodeAt(to))) to += 1;
    if (to - (from + 1) >= LONG_FRACTION_DIGITS) return true;
  }
  return false;
}

/**
 * JSON.parse of the text with its whole doubles marked (or wrapped: see wrapWholeDoubles), by
 * the quickest way that is right for it, and the mark when they were marked:
 * - the literal-by-literal scan when the text holds a run of digits long enough to need the
 *   scan's checks (rare);
 * - else the search for candidates, first without following the strings: when JSON.parse takes
 *   that text, no candidate marked was in a string (wrapWholeDoubles says why). It refuses the
 *   text when one was, or when the text is not JSON: the search is then made again, following
 *   the strings, and its text parsed (a refusal then describes the caller's own text). A text
 *   with an escaped quote is searched following the strings at once: a string holding JSON
 *   (`"{\"x\": 1.0}"`) has whole doubles where values stand, and the first search would be
 *   wasted.
 * A literal that cannot be kept is refused as the first such literal of the text, integers included.
 */
function parseMarked(text: string, mark: Mark | undefined, noQuotedJson: boolean): { value: unknown; mark?: Mark } {
  if (hasLongDigitRun(text)) return { value: parseRewritten(typeNumberLiterals(text), text) };
  const quick = noQuotedJson ? wrapWholeDoubles(text, mark, false) : undefined;
  if (quick !== undefined && quick.problem === undefined) {
    if (quick.text === text) return { value: JSON.parse(text) };
    try {
      return { value: JSON.parse(quick.text), mark: quick.mark };
    } catch {
      // A candidate in a string was marked, or the text is not JSON.
    }
  }
  const careful = wrapWholeDoubles(text, mark, true);
  return { value: parseRewritten(careful.problem === undefined ? careful : typeNumberLiterals(text), text), mark: careful.mark };
}

/** The text with literals rewritten, or the first literal that cannot be kept. */
interface Rewrite {
  text: string;
  /** The mark of whole doubles, when they were marked (rather than wrapped): the walk after JSON.parse then makes them Doubles. */
  mark?: Mark;
  problem?: { start: number; end: number; kind: LiteralProblem };
}

/**
 * JSON.parse of the rewritten text. Text that is not JSON gets JSON.parse's error about the
 * caller's own text; JSON with a literal that cannot be kept, the 400 naming it.
 */
function parseRewritten(rewrite: Rewrite, text: string): unknown {
  if (rewrite.problem !== undefined) {
    JSON.parse(text);
    const { start, end, kind } = rewrite.problem;
    throw literalError(text, start, end, kind, WHERE);
  }
  if (rewrite.text === text) return JSON.parse(text);
  try {
    return JSON.parse(rewrite.text);
  } catch {
    return JSON.parse(text);
  }
}

/**
 * Where a literal may need more than JSON.parse gives it: a fraction of zeros only (`3.0`) or an
 * exponent (`1e3`, or `1e-999`, which would be read as 0). Other fractions (most measured values)
 * are read right by JSON.parse and never looked at: one out of a double's range is not finite,
 * which the walk after JSON.parse sees, and one over the length bound either has a long fraction
 * (hasLongDigitRun) or is beyond 2^53, which the walk also sees.
 */
const CANDIDATE = /\d(?:\.0+(?![0-9])|[eE])/g;

/** Up to this length a literal `-?<digits>.<zeros>` is in a double's range and within the length bound. */
const SURE_WHOLE_LENGTH = 300;

/**
 * The text with each whole double (`3.0`, `1e3`) replaced by its `mark` (or without one, its
 * wrapper); every literal with a fraction or an exponent that may be out of range or too long
 * is checked. Integer literals are not looked at (the walk after JSON.parse types them).
 *
 * The regular expression finds the candidates (it runs in native code, several times faster than
 * a loop over the characters). Whether one is inside a string is decided:
 * - with `followStrings`, by the quotes between it and the last place known to be outside one,
 *   each string skipped whole;
 * - without, not at all: a candidate is taken for a value when the characters around it are
 *   those a value has around it (isInValuePlace). Marking one that is in a string makes text
 *   that is never JSON: the mark (or wrapper) has a quote that is not escaped (no backslash
 *   stands before a value place), which ends the string, followed by the literal (or by
 *   `$`), which JSON has nowhere right after a string; JSON.parse refuses it (see parseMarked).
 *   Following the strings costs more than the rest of the search together when records hold
 *   several strings each. A problem found this way may be in a string: the caller confirms it.
 */
export function wrapWholeDoubles(text: string, mark: Mark | undefined, followStrings: boolean): Rewrite {
  let out = '';
  const pieces: string[] = [];
  let copiedTo = 0;
  // Everything before `outside` has been read (and when following strings, it is in none).
  let outside = 0;
  // Most bodies of integers have no point and no `e` at all, which native searches tell at once.
  if (text.indexOf('.') < 0 && text.indexOf('e') < 0 && text.indexOf('E') < 0) return { text };
  const candidates = new RegExp(CANDIDATE);
  // test() rather than exec(): exec makes a result array per candidate (a body of megabytes has
  // hundreds of thousands), all garbage for the collector; where the match started
  // follows from where it ended (candidateStart).
  while (candidates.test(text)) {
    const matchStart = candidateStart(text, candidates.lastIndex);
    let start = matchStart;
    while (start > outside && isLiteralBody(text.charCodeAt(start - 1))) start -= 1;
    if (followStrings) {
      const inString = skipStringsBefore(text, outside, start);
      if (inString === undefined) break;
      if (inString > start) {
        outside = candidates.lastIndex = inString;
        continue;
      }
    } else if (!isInValuePlace(text, start, candidates.lastIndex)) {
      outside = candidates.lastIndex;
      continue;
    }
    let end = candidates.lastIndex;
    let wrapper: string | undefined;
    if (isZerosFraction(text, start, matchStart + 1, end)) {
      // The most common whole double by far, judged without copying it out: valid, whole, in range.
      if (mark === undefined) wrapper = `{"$numberDouble":"${text.slice(start, end)}"}`;
    } else {
      end = numberRunEnd(text, start);
      const judged = fractionWrapper(text, start, end);
      if (typeof judged === 'object') return { text, problem: judged };
      outside = candidates.lastIndex = end;
      if (judged === undefined) continue;
      if (mark === undefined) wrapper = judged;
    }
    outside = candidates.lastIndex = end;
    out += text.slice(copiedTo, start) + (wrapper ?? `"${text.slice(start, end)}${mark!.written}"`);
    copiedTo = end;
    if (out.length >= FLAT_PIECE_LENGTH) {
      pieces.push(flat(out));
      out = '';
    }
  }
  if (copiedTo === 0) return { text };
  pieces.push(out, text.slice(copiedTo));
  return { text: pieces.join(''), ...(mark === undefined ? {} : { mark }) };
}

/**
 * The rewritten text is built in flat pieces of about this many characters. Concatenation makes
 * a rope: a few small strings per literal marked (the text before it, the mark, and the two
 * joins), all alive until JSON.parse flattens the rope. On a body of megabytes (hundreds of
 * thousands of whole doubles) that is megabytes of small objects the young generation's
 * collections copy and then promote, which cost more CPU than the search itself (4 MiB of
 * records: about 10 ms of collection per body). Flattened every FLAT_PIECE_LENGTH characters,
 * a rope dies young, and each piece is one string too large for the young generation's pages
 * (V8 puts a string above 128 KiB in its large-object space, which a scavenge does not copy).
 */
const FLAT_PIECE_LENGTH = 256 * 1024;

/** The rope, flattened: V8 flattens a rope the first time a character is read from it. */
function flat(rope: string): string {
  // Kept where the optimizing compiler cannot drop the read as unused.
  _flatReads ^= rope.charCodeAt(0);
  return rope;
}

let _flatReads = 0;

/**
 * Where the CANDIDATE match that ends at `matchEnd` starts: two characters before an `e` it ends
 * with, else at the digit before its point (it ends with the zeros after the point).
 */
function candidateStart(text: string, matchEnd: number): number {
  let at = matchEnd - 1;
  const last = text.charCodeAt(at);
  if (last === LOWER_E || last === UPPER_E) return at - 1;
  while (text.charCodeAt(at) === DIGIT_0) at -= 1;
  return at - 1;
}

/**
 * Whether the number literal that starts at `start` (its first `matchEnd - start` characters
 * matched) stands where JSON has a value, judged by the characters around it, JSON whitespace
 * aside: after `[`, `,`, a key's `":`, or nothing; before `,`, `]`, `}`, or nothing. Text in a
 * string rarely looks like that (`"version: 2.0"` does not), so that the search that does not
 * follow strings seldom marks one there and has to be made again.
 */
function isInValuePlace(text: string, start: number, matchEnd: number): boolean {
  let before = start - 1;
  while (before >= 0 && isJsonSpace(text.charCodeAt(before))) before -= 1;
  if (before >= 0) {
    const code = text.charCodeAt(before);
    if (code === COLON) {
      before -= 1;
      while (before >= 0 && isJsonSpace(text.charCodeAt(before))) before -= 1;
      if (text.charCodeAt(before) !== QUOTE) return false;
    } else if (code !== COMMA && code !== OPEN_BRACKET) return false;
  }
  let after = numberRunEnd(text, matchEnd);
  while (after < text.length && isJsonSpace(text.charCodeAt(after))) after += 1;
  if (after === text.length) return true;
  const code = text.charCodeAt(after);
  return code === COMMA || code === CLOSE_BRACKET || code === CLOSE_BRACE;
}

const COLON = 0x3a;
const COMMA = 0x2c;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const CLOSE_BRACE = 0x7d;
const isJsonSpace = (code: number): boolean => code === 0x20 || code === 0x0a || code === 0x0d || code === 0x09;

/** Digits, a point and a minus: what a literal's start may be walked back over. */
const isLiteralBody = (code: number): boolean => isDigit(code) || code === DOT || code === MINUS;

/**
 * Whether text[start, end) is a whole literal `-?<integer>.<zeros>` of at most SURE_WHOLE_LENGTH
 * characters, `point` the index of its point, given that CANDIDATE matched its last integer
 * digit and its zeros: a JSON integer part (no leading zero), and no number character around it.
 */
function isZerosFraction(text: string, start: number, point: number, end: number): boolean {
  if (text.charCodeAt(point) !== DOT || end - start > SURE_WHOLE_LENGTH) return false;
  if (isNumberChar(text.charCodeAt(end)) || (start > 0 && isNumberChar(text.charCodeAt(start - 1)))) return false;
  let at = text.charCodeAt(start) === MINUS ? start + 1 : start;
  if (text.charCodeAt(at) === DIGIT_0 && point - at > 1) return false;
  for (; at < point; at += 1) if (!isDigit(text.charCodeAt(at))) return false;
  return true;
}

/**
 * Skips the strings that open between `from` (outside any string) and `to`: the position where
 * the last of them closes when one is still open at `to` (so `to` is inside it), else a position
 * at or before `to` that is outside every string; undefined for a string that never closes (the
 * text is then not JSON, and JSON.parse says so).
 */
function skipStringsBefore(text: string, from: number, to: number): number | undefined {
  let at = from;
  for (;;) {
    const open = text.indexOf('"', at);
    if (open < 0 || open >= to) return at;
    const close = stringEnd(text, open);
    if (close < 0) return undefined;
    if (close > to) return close;
    at = close;
  }
}

/**
 * The wrapper for the literal text[start, end) that has a fraction or an exponent: a
 * `$numberDouble` when its value is whole, else undefined (also for a run that is no JSON
 * number: JSON.parse refuses it); the problem when it is too long or out of range.
 */
function fractionWrapper(text: string, start: number, end: number): string | Required<Rewrite>['problem'] | undefined {
  if (end - start > MAX_NUMBER_LITERAL_LENGTH) return { start, end, kind: 'too_long' };
  const literal = text.slice(start, end);
  if (!JSON_NUMBER.test(literal)) return undefined;
  const value = Number(literal);
  const kind = rangeProblem(text, start, end, value);
  if (kind !== undefined) return { start, end, kind };
  return Number.isInteger(value) ? `{"$numberDouble":"${literal}"}` : undefined;
}

/**
 * The Extended JSON wrapper a literal stands for, or undefined when JSON.parse already reads it
 * right or the walk after it types it (an integer up to 2^53, or beyond int64).
 */
export function typedLiteral(literal: string): string | undefined {
  if (literal.length > MAX_NUMBER_LITERAL_LENGTH || !JSON_NUMBER.test(literal)) return undefined;
  if (/[.eE]/.test(literal)) return Number.isInteger(Number(literal)) ? `{"$numberDouble":"${literal}"}` : undefined;
  return integerKind(literal, literal.charCodeAt(0) === MINUS ? 1 : 0, literal.length) === 'exact-int64'
    ? `{"$numberLong":"${literal}"}`
    : undefined;
}

/**
 * What JSON.parse makes of the integer literal text[start, end) (digits from `digitsFrom`):
 * `parsed-exactly` up to 2^53 in size, `exact-int64` for an int64 it would round, `beyond-int64`
 * for anything larger (a double, as documented). Decided on the digits, without converting them.
 */
function integerKind(text: string, digitsFrom: number, end: number): 'parsed-exactly' | 'exact-int64' | 'beyond-int64' {
  const digits = end - digitsFrom;
  if (digits < MAX_SAFE_DIGITS.length) return 'parsed-exactly';
  if (digits === MAX_SAFE_DIGITS.length && text.slice(digitsFrom, end) <= MAX_SAFE_DIGITS) return 'parsed-exactly';
  if (digits < INT64_MAX_DIGITS.length) return 'exact-int64';
  if (digits > INT64_MAX_DIGITS.length) return 'beyond-int64';
  const bound = digitsFrom > 0 && text.charCodeAt(digitsFrom - 1) === MINUS ? INT64_MIN_DIGITS : INT64_MAX_DIGITS;
  // Same length, no leading zeros (JSON has none): comparing the text compares the numbers.
  return text.slice(digitsFrom, end) <= bound ? 'exact-int64' : 'beyond-int64';
}

/**
 * The text with every literal that needs a wrapper replaced: whole doubles, and int64s beyond
 * 2^53 that JSON.parse would round. Scans the text once: strings are skipped whole (their
 * closing quote found by indexOf), each literal is judged by its characters. Refuses a literal
 * that is too long or out of a double's range. Unterminated strings end the scan: the text is
 * then not JSON anyway.
 */
export function typeNumberLiterals(text: string): Rewrite {
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
    const start = at;
    if (code === MINUS) at += 1;
    const digitsFrom = at;
    while (at < end && isDigit(text.charCodeAt(at))) at += 1;
    const intDigits = at - digitsFrom;
    if (at < end && isNumberChar(text.charCodeAt(at))) {
      // A fraction, an exponent, or a run that is no JSON number at all.
      const runEnd = numberRunEnd(text, at);
      const wrapper = fractionWrapper(text, start, runEnd);
      if (typeof wrapper === 'object') return { text, problem: wrapper };
      if (wrapper !== undefined) {
        out += text.slice(copiedTo, start) + wrapper;
        copiedTo = runEnd;
      }
      at = runEnd;
      continue;
    }
    // An integer literal (or a malformed run JSON.parse refuses: "-", "012").
    if (intDigits <= SURE_INT32_DIGITS) continue;
    if (at - start > MAX_NUMBER_LITERAL_LENGTH) return { text, problem: { start, end: at, kind: 'too_long' } };
    if (text.charCodeAt(digitsFrom) === DIGIT_0) continue;
    const kind = integerKind(text, digitsFrom, at);
    if (kind === 'exact-int64') {
      out += `${text.slice(copiedTo, start)}{"$numberLong":"${text.slice(start, at)}"}`;
      copiedTo = at;
    } else if (kind === 'beyond-int64' && intDigits > MAX_DOUBLE_DIGITS && !Number.isFinite(Number(text.slice(start, at)))) {
      return { text, problem: { start, end: at, kind: 'overflow' } };
    }
  }
  return { text: copiedTo === 0 ? text : out + text.slice(copiedTo) };
}

/**
 * One walk over a parsed body. Besides typing its numbers, it notes what the Extended JSON
 * revival would otherwise walk the body again to find: whether any key could pollute a prototype
 * (`__proto__`, `constructor`), nesting goes beyond MAX_NESTING_DEPTH, or (known from the text)
 * a key holds a NUL; whether any key could be a wrapper (`$...`), and whether any such key is not
 * one a wrapper may hold. The revival and the record rules are told.
 */
interface Walk {
  /** Whether to type every number, even one JSON.parse may have changed (see typeParsedNumbers). */
  final: boolean;
  /** The code of the last character of whole doubles' marks (made Doubles here), or NO_MARK. */
  markCode: number;
  /** No key that could pollute a prototype or holds a NUL, nesting within bounds. */
  safeKeys: boolean;
  /** Safe keys, and none starting with `$`: nothing to revive. */
  plain: boolean;
  /** Every key starting with `$` is one an Extended JSON wrapper may hold (so none is an operator). */
  wrapperKeysOnly: boolean;
  /** Whether an integer beyond int32 was met (one the store makes a Long of, see int64-numbers.ts). */
  wideIntegers: boolean;
  /** Whether Doubles are shared (a body of SHARE_DOUBLES_FROM characters or more), and those made so far, by mark (sharedDouble). */
  shareDoubles: boolean;
  doubles?: Map<string, Double>;
}

const NO_MARK = -1;

/** How many distinct whole doubles of one body share their Double (see sharedDouble). */
const MAX_SHARED_DOUBLES = 256;
/**
 * The length of text from which a body's Doubles are shared. Below it the young generation
 * holds a body's Doubles without copying them many times, and sharing measured no gain (at
 * 1 MiB of records); from 4 MiB it spares about 15 % of the reading.
 */
const SHARE_DOUBLES_FROM = 2 * 1024 * 1024;

/**
 * The Double of a whole double's mark, one per distinct literal of the body (up to
 * MAX_SHARED_DOUBLES of them): bodies repeat the same few (`0.0`, `1.0`, a count written as a
 * float in every record), and a Double made per literal stays alive with the body, so that on
 * bodies of megabytes the young generation's collections copy and promote them all. A Double is
 * a value nothing changes once made (no reader of a body writes to one), so records may share
 * it as they share a string.
 */
function sharedDouble(mark: string, walk: Walk): Double {
  if (!walk.shareDoubles) return markedDouble(mark);
  walk.doubles ??= new Map();
  let double = walk.doubles.get(mark);
  if (double === undefined) {
    double = markedDouble(mark);
    if (walk.doubles.size < MAX_SHARED_DOUBLES) walk.doubles.set(mark, double);
  }
  return double;
}

const DOLLAR = 0x24;
const UNDERSCORE = 0x5f;
const LOWER_C = 0x63;

/**
 * Makes each whole double's mark its Double and, once the text was read literal by literal
 * (`walk.final`), each integer beyond int64 its Double; integers up to 2^53 stay numbers (see the
 * module comment). Returns the value typed: the same containers, changed in place (they are
 * JSON.parse's own), except that an array that gets a new value is copied into a new array as it
 * is walked (writing an object into an array of numbers makes V8 box each of its numbers first).
 * Unless `walk.final`, stops and answers undefined at a number JSON.parse may have changed
 * (beyond 2^53 or not finite): the text must then be read literal by literal. Below MAX_NESTING_DEPTH only: a deeper body is refused by the
 * Extended JSON revival, which checks that before anything else reads it.
 */
function typeParsedNumbers(value: unknown, depth: number, walk: Walk): unknown {
  // A body that is one whole double (not a record, refused later) is its mark alone.
  if (typeof value === 'string' && value.charCodeAt(value.length - 1) === walk.markCode) return sharedDouble(value, walk);
  if (typeof value !== 'object' || value === null) return value;
  if (depth > MAX_NESTING_DEPTH) {
    walk.safeKeys = walk.plain = false;
    return value;
  }
  if (Array.isArray(value)) return typeArray(value as unknown[], depth, walk);
  const container = value as Record<string, unknown>;
  // for-in reads the keys from the object's shape (JSON.parse's objects have no inherited
  // enumerable keys), without the array Object.keys would allocate for each of them.
  for (const key in container) {
    const first = key.charCodeAt(0);
    if (first === DOLLAR || first === UNDERSCORE || first === LOWER_C) {
      if (first === DOLLAR) {
        walk.plain = false;
        if (walk.wrapperKeysOnly && !isWrapperKeyName(key)) walk.wrapperKeysOnly = false;
      } else if (key === '__proto__' || key === 'constructor') walk.safeKeys = walk.plain = false;
      // JSON.parse made "__proto__" an own property; the revival refuses it, so it is left alone.
      if (key === '__proto__') continue;
    }
    const item = container[key];
    const typed = typedItem(item, depth, walk);
    if (typed === undefined) return undefined;
    if (typed !== item) container[key] = typed;
  }
  return value;
}

function typeArray(array: unknown[], depth: number, walk: Walk): unknown[] | undefined {
  let out: unknown[] | undefined;
  for (let i = 0; i < array.length; i += 1) {
    const item = array[i];
    const typed = typedItem(item, depth, walk);
    if (typed === undefined) return undefined;
    if (out !== undefined) out[i] = typed;
    else if (typed !== item) {
      out = copyBefore(array, i);
      out[i] = typed;
    }
  }
  return out ?? array;
}

/** A member of a container at `depth`, typed (undefined: see typeParsedNumbers). */
function typedItem(item: unknown, depth: number, walk: Walk): unknown {
  if (typeof item === 'number') {
    if ((item | 0) !== item && Number.isInteger(item)) walk.wideIntegers = true;
    return typedNumber(item, walk.final);
  }
  if (typeof item === 'object') return item === null ? item : typeParsedNumbers(item, depth + 1, walk);
  if (typeof item === 'string' && item.charCodeAt(item.length - 1) === walk.markCode) return sharedDouble(item, walk);
  return item;
}

/**
 * A number of the parsed body as the body keeps it: itself when JSON.parse read it exactly (an
 * integer up to 2^53, or not whole), else, once `final`, the Double of an integer beyond int64
 * (the only wide integers left unwrapped then: typeNumberLiterals wrapped the int64s beyond
 * 2^53); undefined when it may have been changed by JSON.parse and `final` is not set.
 */
function typedNumber(item: number, final: boolean): unknown {
  if ((item | 0) === item || !Number.isInteger(item)) return Number.isFinite(item) || final ? item : undefined;
  if (item <= Number.MAX_SAFE_INTEGER && item >= -Number.MAX_SAFE_INTEGER) return item;
  return final ? wideInteger(item) : undefined;
}
