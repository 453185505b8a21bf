/**
 * Number literals in JSON text, found without parsing it: the pieces every body parser that
 * looks at how a number was written shares (record bodies, task arguments).
 *
 * A literal is bounded in length (MAX_NUMBER_LITERAL_LENGTH): no double has more digits that
 * matter, and a longer literal is refused before anything converts it, so that no conversion's
 * cost (BigInt of a 15-million-digit integer grows with the square of its length) can be pulled
 * by a caller. A literal that overflows a double (`1e999`) or underflows to zero (`1e-999`) would
 * be stored as a different number than the one written; it is refused too, where the parser asks.
 *
 * Everything here is linear in the text's length. Which field a refused literal is in is found
 * by a second pass over the text (jsonPathAt), made only when there is something to refuse.
 */
import { ApiError, badRequest } from '../errors.js';

/** The longest number literal a body may hold. */
export const MAX_NUMBER_LITERAL_LENGTH = 400;

/** Character codes of JSON text that the scanners of number literals look for. */
export const QUOTE = 0x22;
const BACKSLASH = 0x5c;
export const MINUS = 0x2d;
const PLUS = 0x2b;
export const DOT = 0x2e;
export const DIGIT_0 = 0x30;
const DIGIT_1 = 0x31;
const DIGIT_9 = 0x39;
export const LOWER_E = 0x65;
export const UPPER_E = 0x45;

export const isDigit = (code: number): boolean => code >= DIGIT_0 && code <= DIGIT_9;

/** Characters a number literal may contain (digits, sign, point, exponent). */
export function isNumberChar(code: number): boolean {
  return isDigit(code) || code === MINUS || code === PLUS || code === DOT || code === LOWER_E || code === UPPER_E;
}

/** The index after the string that opens at `open`, or -1 when it is not closed. */
export function stringEnd(text: string, open: number): number {
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

/**
 * Whether a digit is followed by `.`, `e` or `E` anywhere (strings included): whether the text may
 * hold a literal with a fraction or an exponent. The three characters are looked for natively
 * first; most bodies of integers have none.
 */
export function mayHoldFractions(text: string): boolean {
  if (text.indexOf('.') < 0 && text.indexOf('e') < 0 && text.indexOf('E') < 0) return false;
  return DIGIT_THEN_FRACTION.test(text);
}

const DIGIT_THEN_FRACTION = /\d[.eE]/;

/** The end of the run of number characters that starts at `start`. */
export function numberRunEnd(text: string, start: number): number {
  let at = start;
  while (at < text.length && isNumberChar(text.charCodeAt(at))) at += 1;
  return at;
}

/** Why a finite-looking literal cannot be kept as the double it reads as, if it cannot. */
export type LiteralProblem = 'too_long' | 'overflow' | 'underflow';

/**
 * The problem with the valid JSON number literal text[start, end), given its value as a double:
 * not finite (an overflow), or zero although a digit of its mantissa is not (an underflow).
 */
export function rangeProblem(text: string, start: number, end: number, value: number): LiteralProblem | undefined {
  if (!Number.isFinite(value)) return 'overflow';
  if (value !== 0) return undefined;
  for (let at = start; at < end; at += 1) {
    const code = text.charCodeAt(at);
    if (code === LOWER_E || code === UPPER_E) return undefined;
    if (code >= DIGIT_1 && code <= DIGIT_9) return 'underflow';
  }
  return undefined;
}

const EXCERPT = 40;

/**
 * The 400 for a literal `where` (the request body) cannot keep, naming its field: the path is
 * found by a second pass over the text, which only a refused body pays for.
 */
export function literalError(text: string, start: number, end: number, problem: LiteralProblem, where: string): ApiError {
  const path = jsonPathAt(text, start);
  const at = path === '' ? '' : ` (at ${path})`;
  const literal = text.slice(start, Math.min(end, start + EXCERPT)) + (end - start > EXCERPT ? '…' : '');
  const detail = { path, literal, length: end - start };
  switch (problem) {
    case 'too_long':
      return badRequest(
        'number_too_long',
        `A number in ${where}${at} is ${end - start} characters long; at most ${MAX_NUMBER_LITERAL_LENGTH} are accepted. ` +
          'Send a longer value as a string, or {"$numberDecimal": "<digits>"} for an exact decimal.',
        { ...detail, limit: MAX_NUMBER_LITERAL_LENGTH },
      );
    case 'overflow':
      return badRequest(
        'number_out_of_range',
        `The number ${literal} in ${where}${at} is too large for a double. ` +
          'Send infinity or NaN as {"$numberDouble": "Infinity"}, {"$numberDouble": "-Infinity"} or {"$numberDouble": "NaN"}, ' +
          'or an exact large value as {"$numberDecimal": "<digits>"}.',
        detail,
      );
    case 'underflow':
      return badRequest(
        'number_out_of_range',
        `The number ${literal} in ${where}${at} is too small for a double and would be stored as 0. ` +
          'Send 0 if that is meant, or an exact value as {"$numberDecimal": "<digits>"}.',
        detail,
      );
  }
}

/**
 * Refuses the first number literal of `text` longer than MAX_NUMBER_LITERAL_LENGTH (a 400, see
 * literalError). For parsers that read every literal themselves and only need it bounded first.
 */
export function assertNumberLiteralsBounded(text: string, where: string): void {
  const end = text.length;
  let at = 0;
  while (at < end) {
    const code = text.charCodeAt(at);
    if (code === QUOTE) {
      at = stringEnd(text, at);
      if (at < 0) return;
      continue;
    }
    if (!isNumberChar(code)) {
      at += 1;
      continue;
    }
    const runEnd = numberRunEnd(text, at);
    if (runEnd - at > MAX_NUMBER_LITERAL_LENGTH) throw literalError(text, at, runEnd, 'too_long', where);
    at = runEnd;
  }
}

/**
 * The dotted path (`records.3.value`) of the value that starts at `offset` in JSON text, by
 * walking the text up to there with a stack of the open objects and arrays: the key last read in
 * each object, the count of values begun in each array. Empty for the top-level value.
 */
export function jsonPathAt(text: string, offset: number): string {
  const keys: (string | number)[] = [];
  const inArray: boolean[] = [];
  let pendingKey: string | undefined;
  let at = 0;
  while (at < offset && at < text.length) {
    const code = text.charCodeAt(at);
    if (code === QUOTE) {
      const close = stringEnd(text, at);
      if (close < 0) break;
      const inObject = inArray.length > 0 && !inArray[inArray.length - 1]!;
      // A string in an object that a colon follows is a key.
      let next = close;
      while (next < text.length && /\s/.test(text.charAt(next))) next += 1;
      if (inObject && text.charCodeAt(next) === 0x3a) {
        try {
          pendingKey = JSON.parse(text.slice(at, close)) as string;
        } catch {
          pendingKey = text.slice(at + 1, close - 1);
        }
      }
      at = close;
      continue;
    }
    if (code === 0x7b || code === 0x5b) {
      // `{` or `[`: the container is the value of the current key or index.
      inArray.push(code === 0x5b);
      keys.push(code === 0x5b ? 0 : '');
      at += 1;
      continue;
    }
    if (code === 0x7d || code === 0x5d) {
      inArray.pop();
      keys.pop();
      at += 1;
      continue;
    }
    if (code === 0x2c && inArray.length > 0 && inArray[inArray.length - 1]!) {
      keys[keys.length - 1] = (keys[keys.length - 1] as number) + 1;
    } else if (code === 0x3a && pendingKey !== undefined) {
      keys[keys.length - 1] = pendingKey;
      pendingKey = undefined;
    }
    at += 1;
  }
  return keys.join('.');
}
