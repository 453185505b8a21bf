import { doubleText, nonFiniteJson } from './double-text.js';
import { IntegralDouble, type PlainValue } from './types.js';

/**
 * Compact JSON of a plain value: JSON.stringify's text, except that a whole double is written
 * `3.0` (see IntegralDouble), which JSON.stringify cannot do, and a number that is not finite is
 * its Extended JSON wrapper (double-text.ts), where JSON.stringify writes `null`. Strings and keys still go through
 * JSON.stringify, so escaping is exactly its own.
 */
export function plainJson(value: PlainValue): string {
  if (value === null) return 'null';
  switch (typeof value) {
    case 'string':
      return JSON.stringify(value);
    case 'number':
      return Number.isFinite(value) ? String(value) : nonFiniteJson(value);
    case 'boolean':
      return value ? 'true' : 'false';
  }
  if (value instanceof IntegralDouble) return doubleText(value.value);
  if (Array.isArray(value)) {
    let out = '[';
    for (let i = 0; i < value.length; i += 1) out += (i === 0 ? '' : ',') + plainJson(value[i] as PlainValue);
    return `${out}]`;
  }
  let out = '{';
  let first = true;
  for (const key of Object.keys(value)) {
    const member = value[key];
    if (member === undefined) continue;
    out += `${first ? '' : ','}${JSON.stringify(key)}:${plainJson(member)}`;
    first = false;
  }
  return `${out}}`;
}
