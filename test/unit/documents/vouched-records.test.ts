/**
 * Record bodies whose keys the body parser vouched for (parseRecordJson, isVouchedStorable) are
 * not walked again by the record rules: the vouch must hold only for bodies whose every key
 * passes them, so that what the rules refuse is refused with or without it.
 */
import { describe, expect, it } from 'vitest';
import { parseRecordJson } from '../../../src/documents/number-literals.js';
import { isVouchedStorable, parseJsonBody } from '../../../src/documents/extended-json.js';
import { assertStorableRecord } from '../../../src/documents/record-rules.js';
import { apiError } from './api-error.js';

/** The records of a body as the insert route checks them: parsed, revived, each by the record rules. */
function checkBody(text: string): unknown[] {
  const body = parseJsonBody(parseRecordJson(text));
  const records = Array.isArray(body) ? body : [body];
  const keysChecked = isVouchedStorable(body);
  return records.map((record, i) => assertStorableRecord(record, `Record ${i}`, keysChecked));
}

describe('vouched record bodies', () => {
  it('vouches for plain records, one or many, and checks them as objects with storable top-level keys still', () => {
    expect(isVouchedStorable(parseRecordJson('[{"a": 1, "b": {"c": [1, {"d": "x"}]}}, {"e": 2.5}]'))).toBe(true);
    expect(isVouchedStorable(parseRecordJson('{"a": "text", "n": 12345678901234}'))).toBe(true);
    expect(apiError(() => checkBody('[{"a": 1}, {"$oid": null}]')).code).toBe('invalid_field_name');
    expect(checkBody('[{"a": 1}, {"b": 2}]')).toEqual([{ a: 1 }, { b: 2 }]);
    expect(apiError(() => checkBody('[{"a": 1}, 3]')).code).toBe('invalid_body');
    expect(apiError(() => checkBody('[{"a": 1}, [{"b": 2}]]')).code).toBe('invalid_body');
  });

  it('does not vouch for a body with an escape or a DEL anywhere, and the rules still refuse control characters in keys', () => {
    for (const text of ['[{"ok": 1}, {"x": {"a\\u0001b": 1}}]', '{"a\\nb": 1}', '{"deep": [{"a\\tb": 1}]}', '{"a\u007fb": 1}']) {
      expect(isVouchedStorable(parseRecordJson(text))).toBe(false);
      expect(apiError(() => checkBody(text)).code).toBe('invalid_field_name');
    }
    // An escape in a value only: not vouched, and stored.
    expect(checkBody('{"path": "C:\\\\data", "quote": "\\"x\\""}')).toEqual([{ path: 'C:\\data', quote: '"x"' }]);
  });

  it('vouches for records holding Extended JSON wrappers (as the Python client sends them), revived', () => {
    const text =
      '[{"_id": {"$oid": "0123456789abcdef01234567"}, "at": {"$date": "2024-01-02T03:04:05Z"}, "n": 1}, {"_id": "x", "b": {"$binary": {"base64": "AA==", "subType": "00"}}}]';
    const body = parseJsonBody(parseRecordJson(text));
    expect(isVouchedStorable(body)).toBe(true);
    const records = checkBody(text) as { _id: unknown }[];
    expect(records.map((r) => String(r._id))).toEqual(['0123456789abcdef01234567', 'x']);
  });

  it('does not vouch for a body with a $ key at any depth that no wrapper holds, and the rules still refuse operators', () => {
    for (const text of ['[{"a": 1}, {"b": {"$where": "1"}}]', '{"$set": {"a": 1}}', '{"a": [{"b": {"$function": {}}}]}']) {
      expect(isVouchedStorable(parseRecordJson(text))).toBe(false);
      expect(['forbidden_operator', 'invalid_field_name', 'invalid_extended_json']).toContain(apiError(() => checkBody(text)).code);
    }
  });
});
