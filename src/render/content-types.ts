import type { Format } from './types.js';

/** Every format, in the order the HTML page lists its format links. */
export const FORMATS: readonly Format[] = ['api', 'json', 'jsonp', 'xml', 'csv', 'ndjson'];

/** Formats that carry records only: errors are answered in JSON instead (an error is not a record). */
export const isRecordFormat = (format: Format): boolean => format === 'csv' || format === 'ndjson';

export const isFormat = (value: unknown): value is Format => typeof value === 'string' && (FORMATS as readonly string[]).includes(value);

/**
 * The Content-Type of each format. Always with charset: every body is written as UTF-8 and
 * clients must not guess (JSONP in particular must be served as JavaScript, never as text/html).
 */
export function contentTypeFor(format: Format): string {
  switch (format) {
    case 'json':
      return 'application/json; charset=utf-8';
    case 'jsonp':
      return 'application/javascript; charset=utf-8';
    case 'xml':
      return 'application/xml; charset=utf-8';
    case 'api':
      return 'text/html; charset=utf-8';
    case 'csv':
      return 'text/csv; charset=utf-8';
    case 'ndjson':
      return 'application/x-ndjson; charset=utf-8';
  }
}
