/**
 * MongoDB Extended JSON input (relaxed mode), for URL parameters and request bodies.
 *
 * Why not a bare `EJSON.parse`: bson turns *any* object holding a type key into that type and
 * drops its other keys, so the perfectly ordinary filter `{"$regex": "^a", "$ne": "ab"}` would
 * silently lose its `$ne`. Here only objects that are exactly an Extended JSON wrapper are handed
 * to bson; `$regex` next to other operators stays a query operator, and any other wrapper with
 * stray keys is a 400. Values bson accepts without complaint but gets wrong (an unparseable
 * `$date`, a non-numeric `$numberInt`) are refused too, and a `$numberLong` beyond 2^53 stays a
 * Long instead of being rounded.
 *
 * Numbers in records keep the type their wrapper names (see NumberTyping): `{"$numberDouble": "3"}`
 * is a double, `{"$numberLong": "3"}` an int64, as for MongoDB; bson's relaxed mode would make both
 * a JavaScript number, which the driver stores as an int32. number-literals.ts turns a body's
 * `3.0` into such a wrapper before it gets here.
 *
 * Every input is also checked for keys that could pollute prototypes (`__proto__`,
 * `constructor.prototype`), NUL characters in keys (BSON cannot store them) and nesting deeper
 * than MongoDB's own limit (which also bounds the recursion below).
 */
import { BSON, Code, Double, Long, ObjectId, type Document } from 'mongodb';
import { ApiError, badRequest } from '../errors.js';
import isPlainObject from 'is-plain-obj';
import { isInt64Free, vouchInt64Free } from './int64-numbers.js';

const { EJSON } = BSON;

/** MongoDB refuses documents nested deeper than 100 levels. */
export const MAX_NESTING_DEPTH = 100;

/**
 * The keys by which bson recognises a typed value, each with every key the wrapper may carry.
 * DBRefs (`$ref`/`$id`) are deliberately absent: left as plain objects they serialise to the
 * same BSON, and their `$id` is still revived by the normal walk.
 */
const WRAPPER_KEYS: Readonly<Record<string, readonly string[]>> = {
  $oid: ['$oid'],
  $date: ['$date'],
  $numberInt: ['$numberInt'],
  $numberLong: ['$numberLong'],
  $numberDouble: ['$numberDouble'],
  $numberDecimal: ['$numberDecimal'],
  $binary: ['$binary', '$type'],
  $uuid: ['$uuid'],
  $timestamp: ['$timestamp'],
  $regularExpression: ['$regularExpression'],
  $regex: ['$regex', '$options'],
  $symbol: ['$symbol'],
  $code: ['$code', '$scope'],
  $dbPointer: ['$dbPointer'],
  $minKey: ['$minKey'],
  $maxKey: ['$maxKey'],
  $undefined: ['$undefined'],
};

const isString = (v: unknown): v is string => typeof v === 'string';
const isOidWrapper = (v: unknown): boolean => isPlainObject(v) && Object.keys(v).length === 1 && isString(v.$oid);

/**
 * What each wrapper must hold, as the Extended JSON specification writes it: the reason to refuse
 * `wrapper` when it holds something else. bson checks few of these itself: given the wrong type
 * it throws a TypeError from deep inside, or, for some, builds a value that only fails later when
 * it is written to the engine (`{"$symbol": 5}`, a 500 once). `$numberInt` and `$numberDouble`
 * are checked more closely in reviveWrapper.
 */
const OPERAND_PROBLEMS: Readonly<Record<string, (wrapper: Record<string, unknown>) => string | undefined>> = {
  $oid: (w) => (isString(w.$oid) ? undefined : 'expected a string of 24 hexadecimal digits.'),
  $date: (w) =>
    isString(w.$date) ||
    (typeof w.$date === 'number' && Number.isFinite(w.$date)) ||
    (isPlainObject(w.$date) && isString(w.$date.$numberLong))
      ? undefined
      : 'expected an ISO 8601 string, a number of milliseconds or {"$numberLong": "<milliseconds>"}.',
  $numberLong: (w) => (isString(w.$numberLong) ? undefined : 'expected a string holding a 64-bit integer.'),
  $numberDecimal: (w) => (isString(w.$numberDecimal) ? undefined : 'expected a string holding a decimal number.'),
  $binary: (w) =>
    (
      w.$type === undefined
        ? isPlainObject(w.$binary) && isString(w.$binary.base64) && isString(w.$binary.subType)
        : isString(w.$binary) && isString(w.$type)
    )
      ? undefined
      : 'expected {"base64": "<text>", "subType": "<hex>"}.',
  $uuid: (w) => (isString(w.$uuid) ? undefined : 'expected a string holding a UUID.'),
  $timestamp: (w) =>
    isPlainObject(w.$timestamp) && typeof w.$timestamp.t === 'number' && typeof w.$timestamp.i === 'number'
      ? undefined
      : 'expected {"t": <seconds>, "i": <increment>}.',
  $regularExpression: (w) =>
    isPlainObject(w.$regularExpression) && isString(w.$regularExpression.pattern) && isString(w.$regularExpression.options)
      ? undefined
      : 'expected {"pattern": "<text>", "options": "<letters>"}.',
  $regex: (w) =>
    isString(w.$regex) && (w.$options === undefined || isString(w.$options))
      ? undefined
      : 'expected a string pattern, and string "$options".',
  $symbol: (w) => (isString(w.$symbol) ? undefined : 'expected a string.'),
  $code: (w) =>
    isString(w.$code) && (w.$scope === undefined || isPlainObject(w.$scope))
      ? undefined
      : 'expected a string of code, and an object "$scope".',
  $dbPointer: (w) =>
    isPlainObject(w.$dbPointer) && isString(w.$dbPointer.$ref) && isOidWrapper(w.$dbPointer.$id)
      ? undefined
      : 'expected {"$ref": "<collection>", "$id": {"$oid": "<hex>"}}.',
  $minKey: (w) => (w.$minKey === 1 ? undefined : 'expected 1.'),
  $maxKey: (w) => (w.$maxKey === 1 ? undefined : 'expected 1.'),
  $undefined: (w) => (w.$undefined === true ? undefined : 'expected true.'),
};

const INT32 = /^-?\d+$/;
const DOUBLE = /^-?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/;
const DOUBLE_SPECIALS = new Set(['NaN', 'Infinity', '-Infinity']);

/**
 * How `$numberDouble` and `$numberLong` are revived. Records (bodies, a task's record) are
 * `typed`: a Double and a Long, stored as such. URL parameters (filters, projections, sorts,
 * pipelines) are `plain`: JavaScript numbers, as the checks on limits and stages expect; a filter
 * compares numbers by value whatever their BSON type, so `{"x": 3}` finds the double 3.0 too.
 */
type NumberTyping = 'typed' | 'plain';

/**
 * Parses a URL parameter holding (Extended) JSON. `paramName` names the parameter in errors:
 * `The "query" parameter is not valid JSON: ...`.
 */
export function parseJsonParam(raw: string, paramName: string): unknown {
  const where = `the "${paramName}" parameter`;
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch (err) {
    throw badRequest('malformed_json', `The "${paramName}" parameter is not valid JSON: ${(err as Error).message}`);
  }
  return revive(parsed, where, 'plain');
}

/** Revives Extended JSON inside a request body that the body parser has already `JSON.parse`d. */
export function parseJsonBody(value: unknown): unknown {
  const known = typeof value === 'object' && value !== null ? vouchedBodies.get(value) : undefined;
  if (known === 'plain') return value;
  if (known === 'safe-keys') {
    const revived = reviveValue(value, [], { where: 'the request body', numbers: 'typed' });
    // The revival turns wrappers into values and keeps every other key: what held of the keys holds still.
    if (storableKeys.has(value as object) && typeof revived === 'object' && revived !== null) storableKeys.add(revived);
    // No wrapper revives to an integer beyond int32 (`$numberLong` is a Long already): none is added.
    if (isInt64Free(value)) vouchInt64Free(revived);
    return revived;
  }
  return revive(value, 'the request body', 'typed');
}

/**
 * What number-literals.ts, walking a body it has just parsed, found true of it:
 * - `safe-keys`: no `__proto__` or `constructor` key, no NUL in a key, nesting within
 *   MAX_NESTING_DEPTH: everything assertSafeKeys checks, so it need not walk the body again;
 * - `plain`: that, and no key starting with `$`, so no wrapper: the revival would return the body
 *   as it is.
 */
type Vouched = 'safe-keys' | 'plain';
const vouchedBodies = new WeakMap<object, Vouched>();

export function vouchForBody(value: unknown, what: Vouched): void {
  if (typeof value === 'object' && value !== null) vouchedBodies.set(value, what);
}

/**
 * Bodies (and their revivals) that number-literals.ts found, besides safe keys, to hold no control
 * character in any key (known from the text) and no `$` key but the names of Extended JSON
 * wrappers (so no operator at any depth): below their top level, every key passes the rules of
 * record-rules.ts, which then need not walk the records again.
 */
const storableKeys = new WeakSet<object>();

export function vouchForStorableKeys(value: unknown): void {
  if (typeof value === 'object' && value !== null) storableKeys.add(value);
}

/** Whether `value` is a body vouched for by vouchForStorableKeys (or the revival of one). */
export function isVouchedStorable(value: unknown): boolean {
  return typeof value === 'object' && value !== null && storableKeys.has(value);
}

/** Every key an Extended JSON wrapper may hold (`$oid`, `$binary` and its `$type`, ...). */
const WRAPPER_FAMILY = new Set(Object.values(WRAPPER_KEYS).flat());

/** Whether `key` is one an Extended JSON wrapper may hold; no operator is. */
export function isWrapperKeyName(key: string): boolean {
  return WRAPPER_FAMILY.has(key);
}

/**
 * Revives Extended JSON inside a value that arrived as JSON some other way (a task's arguments),
 * with the same checks as a request body. `where` names it in errors ("the record").
 */
export function parseJsonValue(value: unknown, where: string): unknown {
  return revive(value, where, 'typed');
}

function revive(value: unknown, where: string, numbers: NumberTyping): unknown {
  assertSafeKeys(value, where);
  return reviveValue(value, [], { where, numbers });
}

/** What the revival of one input needs besides the value: its name in errors and its NumberTyping. */
interface Revival {
  where: string;
  numbers: NumberTyping;
}

/**
 * A value's place in the input, as the key or index of each level: joined into a dotted path only
 * when a message names it, so that a valid body of thousands of records builds no path strings.
 */
type Path = (string | number)[];

const joinPath = (path: Path, key?: string | number): string => (key === undefined ? path : [...path, key]).join('.');
const atPath = (path: Path): string => (path.length === 0 ? '' : ` (at ${joinPath(path)})`);

/** A value waiting to be checked by assertSafeKeys, with what leads to it (its path, built on demand). */
interface Pending {
  value: unknown;
  depth: number;
  parent: Pending | undefined;
  key: string | number;
}

function pathOf(entry: Pending): Path {
  const path: Path = [];
  for (let at: Pending | undefined = entry; at?.parent !== undefined; at = at.parent) path.push(at.key);
  return path.reverse();
}

/**
 * Only objects and arrays are walked into: a string or number has no keys to check, and neither
 * has a Long or a Double (number-literals.ts makes a Double of each whole double; a body may hold
 * hundreds of thousands).
 */
const isContainer = (value: unknown): boolean =>
  typeof value === 'object' && value !== null && !(value instanceof Long) && !(value instanceof Double);

/**
 * Iterative so that hostile nesting cannot overflow the stack before the depth check fires;
 * everything after this (including the recursive revival) may rely on the depth bound.
 */
function assertSafeKeys(root: unknown, where: string): void {
  const stack: Pending[] = [{ value: root, depth: 1, parent: undefined, key: '' }];
  while (stack.length > 0) {
    const entry = stack.pop()!;
    const { value, depth } = entry;
    const isArray = Array.isArray(value);
    if (!isArray && !isPlainObject(value)) continue;
    if (depth > MAX_NESTING_DEPTH) {
      throw badRequest('too_deeply_nested', `${capitalise(where)} is nested more than ${MAX_NESTING_DEPTH} levels deep.`, {
        limit: MAX_NESTING_DEPTH,
      });
    }
    if (isArray) {
      for (let i = 0; i < value.length; i += 1) {
        if (isContainer(value[i])) stack.push({ value: value[i], depth: depth + 1, parent: entry, key: i });
      }
      continue;
    }
    for (const key of Object.keys(value)) {
      const child = value[key];
      if (key === '__proto__') {
        const path = pathOf(entry);
        throw badRequest('forbidden_key', `The key "__proto__" is not allowed in ${where}${atPath(path)}.`, {
          key,
          path: joinPath(path, key),
        });
      }
      if (key === 'constructor' && isPlainObject(child) && Object.hasOwn(child, 'prototype')) {
        const path = pathOf(entry);
        throw badRequest('forbidden_key', `The key path "constructor.prototype" is not allowed in ${where}${atPath(path)}.`, {
          key: 'constructor.prototype',
          path: joinPath([...path, key], 'prototype'),
        });
      }
      if (key.includes('\0')) {
        throw badRequest('invalid_key', `The key ${JSON.stringify(key)} in ${where} contains a NUL character, which is not allowed.`, {
          key,
          path: joinPath(pathOf(entry), key),
        });
      }
      if (isContainer(child)) stack.push({ value: child, depth: depth + 1, parent: entry, key });
    }
  }
}

/** The first key by which bson would read `value` as a typed value (same rule as bson: the first with a non-null value). */
function wrapperKey(value: Record<string, unknown>, keys: readonly string[]): string | undefined {
  for (const key of keys) {
    // '$' is char code 36: most keys are ordinary field names, refused here without a lookup.
    if (key.charCodeAt(0) === 36 && Object.hasOwn(WRAPPER_KEYS, key) && value[key] != null) return key;
  }
  return undefined;
}

/**
 * `{"$numberDouble": "<number>"}` in a record as its Double, else undefined. The one wrapper a
 * body may hold thousands of (number-literals.ts writes one per double literal), so it is read
 * here before the general walk, which costs several times as much per value.
 */
function bodyDouble(value: unknown, revival: Revival): Double | undefined {
  if (revival.numbers !== 'typed') return undefined;
  const text = (value as { $numberDouble?: unknown }).$numberDouble;
  if (typeof text !== 'string' || !DOUBLE.test(text)) return undefined;
  for (const key in value as object) if (key !== '$numberDouble') return undefined;
  return new Double(Number(text));
}

/**
 * The value with every Extended JSON wrapper in it revived. An object or array none of whose
 * members changed is returned as it is, not copied: most of a record is plain data.
 */
function reviveValue(value: unknown, path: Path, revival: Revival): unknown {
  if (Array.isArray(value)) {
    let out: unknown[] | undefined;
    for (let i = 0; i < value.length; i += 1) {
      const item: unknown = value[i];
      if (!isContainer(item)) continue;
      let revived: unknown = bodyDouble(item, revival);
      if (revived === undefined) {
        path.push(i);
        revived = reviveValue(item, path, revival);
        path.pop();
      }
      if (revived !== item) (out ??= value.slice())[i] = revived;
    }
    return out ?? value;
  }
  if (!isPlainObject(value)) return value;

  const keys = Object.keys(value);
  const typeKey = wrapperKey(value, keys);
  if (typeKey !== undefined) {
    const allowed = WRAPPER_KEYS[typeKey]!;
    const stray = keys.filter((k) => !allowed.includes(k));
    if (stray.length === 0) return reviveWrapper(value, typeKey, path, revival);
    // `$regex` with other operators is a query condition, not a BSON regular expression.
    if (typeKey !== '$regex') {
      throw badRequest(
        'malformed_json',
        `${capitalise(revival.where)} has an Extended JSON "${typeKey}" value with unexpected keys beside it${atPath(path)}: ${stray
          .map((k) => `"${k}"`)
          .join(', ')}.`,
        { path: joinPath(path), keys: stray },
      );
    }
  }
  let out: Record<string, unknown> | undefined;
  for (const key of keys) {
    const child = value[key];
    if (!isContainer(child)) continue;
    let revived: unknown = bodyDouble(child, revival);
    if (revived === undefined) {
      path.push(key);
      revived = reviveValue(child, path, revival);
      path.pop();
    }
    // Assigning by key cannot set a prototype here: assertSafeKeys refused every "__proto__" key.
    if (revived !== child) (out ??= { ...value })[key] = revived;
  }
  return out ?? value;
}

/** The error for a wrapper holding the wrong thing (a function of its own: reviveWrapper makes no closure per value). */
function invalidWrapper(revival: Revival, typeKey: string, path: Path, reason: string): ApiError {
  return badRequest(
    'malformed_json',
    `${capitalise(revival.where)} has an invalid Extended JSON "${typeKey}" value${atPath(path)}: ${reason}`,
    {
      path: joinPath(path),
    },
  );
}

function reviveWrapper(raw: Record<string, unknown>, typeKey: string, path: Path, revival: Revival): unknown {
  const operand = raw[typeKey];
  const wrapper =
    NUMBER_OPERANDS.has(typeKey) && (isPlainObject(operand) || operand instanceof Long || operand instanceof Double)
      ? withPlainOperandNumbers(raw)
      : raw;
  const text = wrapper[typeKey];

  // The wrapper number-literals.ts writes for each double of a record body.
  if (typeKey === '$numberDouble' && revival.numbers === 'typed' && typeof text === 'string' && DOUBLE.test(text)) {
    return new Double(Number(text));
  }

  // The two wrappers nearly every record carries, made the way bson makes them from Extended
  // JSON, without its detour through JSON text (a quarter of an insert's CPU went to that).
  if (typeKey === '$oid' && typeof text === 'string') {
    try {
      return new ObjectId(text);
    } catch (err) {
      throw invalidWrapper(revival, typeKey, path, `${(err as Error).message}.`.replace(/\.\.$/, '.'));
    }
  }
  if (typeKey === '$date' && typeof text === 'string') {
    const date = new Date(Date.parse(text));
    if (Number.isNaN(date.getTime())) throw invalidWrapper(revival, typeKey, path, 'not a valid date.');
    return date;
  }

  const problem = OPERAND_PROBLEMS[typeKey]?.(wrapper);
  if (problem !== undefined) throw invalidWrapper(revival, typeKey, path, problem);
  // A scope is a document of its own, which bson would revive without the checks above.
  if (typeKey === '$code' && wrapper.$scope !== undefined) {
    return new Code(text as string, reviveValue(wrapper.$scope, [...path, '$scope'], revival) as Document);
  }

  // bson parses these with parseInt/parseFloat and returns NaN or a truncated number for garbage.
  if (typeKey === '$numberInt') {
    if (typeof text !== 'string' || !INT32.test(text) || Number(text) > 2 ** 31 - 1 || Number(text) < -(2 ** 31)) {
      throw invalidWrapper(revival, typeKey, path, 'expected a string holding a 32-bit integer.');
    }
  }
  if (typeKey === '$numberDouble' && (typeof text !== 'string' || (!DOUBLE.test(text) && !DOUBLE_SPECIALS.has(text)))) {
    throw invalidWrapper(revival, typeKey, path, 'expected a string holding a number, "NaN", "Infinity" or "-Infinity".');
  }
  if (typeKey === '$numberDouble' && revival.numbers === 'typed') return new Double(Number(text));

  let result: unknown;
  try {
    result = EJSON.deserialize(wrapper, { relaxed: !(typeKey === '$numberLong' && revival.numbers === 'typed') });
    // Relaxed mode turns a Long into a JS number even when that loses digits; keep those exact.
    if (typeKey === '$numberLong' && typeof result === 'number' && !Number.isSafeInteger(result)) {
      result = EJSON.deserialize(wrapper, { relaxed: false });
    }
  } catch (err) {
    throw invalidWrapper(revival, typeKey, path, `${(err as Error).message}.`.replace(/\.\.$/, '.'));
  }
  if (result instanceof Date && Number.isNaN(result.getTime())) throw invalidWrapper(revival, typeKey, path, 'not a valid date.');
  return result;
}

/** The wrappers whose operands hold numbers (a `$date`'s milliseconds, a `$timestamp`'s `t` and `i`, ...). */
const NUMBER_OPERANDS = new Set(['$date', '$timestamp', '$minKey', '$maxKey']);

/**
 * An operand as number-literals.ts hands it over when it is not a plain number: a wrapper it
 * wrote (`{"$numberDouble": "<text>"}`, `{"$numberLong": "<text>"}`), or a Double it made of a
 * whole double or of an integer beyond int64 (or a Long). The operand's JavaScript number, or
 * undefined for anything else.
 */
function operandNumber(value: unknown): number | undefined {
  if (value instanceof Long) return value.toNumber();
  if (value instanceof Double) return value.value;
  if (!isPlainObject(value)) return undefined;
  const keys = Object.keys(value);
  if (keys.length !== 1) return undefined;
  const text = value.$numberDouble ?? value.$numberLong;
  return typeof text === 'string' ? Number(text) : undefined;
}

/**
 * The wrapper with the number wrappers among its operands (up to one level down:
 * `{"$timestamp": {"t": ..., "i": ...}}`) made JavaScript numbers. A record body's `1.7e12` in
 * `{"$date": 1.7e12}` reaches here as `{"$numberDouble": "1.7e12"}` (number-literals.ts), and a
 * wrapper's operand is a number of its own kind, not a value to be stored.
 */
function withPlainOperandNumbers(wrapper: Record<string, unknown>): Record<string, unknown> {
  let out: Record<string, unknown> | undefined;
  for (const [key, operand] of Object.entries(wrapper)) {
    const number = operandNumber(operand);
    if (number !== undefined) {
      (out ??= { ...wrapper })[key] = number;
      continue;
    }
    if (!isPlainObject(operand)) continue;
    for (const [innerKey, inner] of Object.entries(operand)) {
      const innerNumber = operandNumber(inner);
      if (innerNumber === undefined) continue;
      out ??= { ...wrapper };
      if (out[key] === operand) out[key] = { ...operand };
      (out[key] as Record<string, unknown>)[innerKey] = innerNumber;
    }
  }
  return out ?? wrapper;
}

const capitalise = (s: string): string => s.charAt(0).toUpperCase() + s.slice(1);
