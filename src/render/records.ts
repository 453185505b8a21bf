import { RESULTS_KEY } from './envelope.js';
import { IntegralDouble, type PlainValue } from './types.js';

/**
 * The records a record format (CSV, NDJSON) writes for a whole value: an envelope's `results`
 * (so that a whole rendering equals the streamed one, see DocumentWriter), a list's items, or
 * any other value as one record.
 */
export function recordsOf(value: PlainValue): PlainValue[] {
  if (Array.isArray(value)) return value;
  if (typeof value === 'object' && value !== null && !(value instanceof IntegralDouble)) {
    const results = value[RESULTS_KEY];
    if (Array.isArray(results) && 'count' in value && 'meta' in value && 'next' in value && 'previous' in value) return results;
  }
  return [value];
}
