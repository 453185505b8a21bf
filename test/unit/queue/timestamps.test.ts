import { describe, expect, it } from 'vitest';
import { formatCeleryTimestamp, formatNaiveUtcIsoformat, parseIsoTimestamp } from '../../../src/queue/protocol/timestamps.js';

describe('timestamps', () => {
  it('formats header timestamps with exactly six fraction digits and +00:00', () => {
    expect(formatCeleryTimestamp(new Date(Date.UTC(2024, 5, 19, 19, 23, 24, 611)))).toBe('2024-06-19T19:23:24.611000+00:00');
    expect(formatCeleryTimestamp(new Date(Date.UTC(2024, 0, 2, 3, 4, 5, 0)))).toBe('2024-01-02T03:04:05.000000+00:00');
    expect(formatCeleryTimestamp(new Date(Date.UTC(2024, 0, 2, 3, 4, 5, 7)))).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}\+00:00$/);
  });

  it('formats date_done like Python utcnow().isoformat(): naive, fraction only when non-zero', () => {
    expect(formatNaiveUtcIsoformat(new Date(Date.UTC(2024, 5, 19, 19, 23, 25, 120)))).toBe('2024-06-19T19:23:25.120000');
    expect(formatNaiveUtcIsoformat(new Date(Date.UTC(2024, 5, 19, 19, 23, 25, 0)))).toBe('2024-06-19T19:23:25');
  });

  it('refuses invalid dates', () => {
    expect(() => formatCeleryTimestamp(new Date('nope'))).toThrow(RangeError);
  });

  it.each([
    ['2024-06-19T19:23:24.611430+00:00', '2024-06-19T19:23:24.611Z'],
    ['2024-06-19T19:23:24.611430', '2024-06-19T19:23:24.611Z'],
    ['2024-06-19T19:23:24Z', '2024-06-19T19:23:24.000Z'],
    ['2024-06-19T21:23:24.5+02:00', '2024-06-19T19:23:24.500Z'],
    ['2024-06-19T14:23:24-0500', '2024-06-19T19:23:24.000Z'],
    ['2024-06-19 19:23:24.123456789+00:00', '2024-06-19T19:23:24.123Z'],
    ['2024-06-19', '2024-06-19T00:00:00.000Z'],
  ])('parses %s', (text, iso) => {
    expect(parseIsoTimestamp(text)?.toISOString()).toBe(iso);
  });

  it('returns null for non-ISO text', () => {
    expect(parseIsoTimestamp('yesterday')).toBeNull();
    expect(parseIsoTimestamp('')).toBeNull();
  });

  it('round-trips its own header format', () => {
    const date = new Date(Date.UTC(2030, 11, 31, 23, 59, 59, 999));
    expect(parseIsoTimestamp(formatCeleryTimestamp(date))?.getTime()).toBe(date.getTime());
  });
});
