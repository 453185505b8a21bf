import { cellAt, csvLine, flattenRecord } from './csv-cells.js';
import type { DocumentWriter } from './document.js';
import { recordsOf } from './records.js';
import type { PlainValue } from './types.js';

/** Records whose columns make the header when no `fields` are given. */
export const CSV_SAMPLE_SIZE = 1000;

/**
 * CSV of the records of a result (RFC 4180, CRLF line ends, a header row). The envelope's paging
 * members are not part of the output: a CSV file is the records.
 *
 * The columns are `fields` when given; otherwise the union of the leaf paths of the first
 * `sampleSize` records in order of first appearance, `_id` first. Until the sample is complete,
 * records are held (bounded by the sample size) and nothing is written; fields that first appear
 * after the sample get no column. A whole value is written as its records (see recordsOf).
 *
 * No guard against spreadsheet formula injection (a leading `=`, `+`, `-`, `@`) is applied: the
 * cells are the data exactly, so exports read back unchanged.
 *
 * The writer keeps state between calls: one instance per response.
 */
export function csvDocument(fields: readonly string[] | undefined, sampleSize = CSV_SAMPLE_SIZE): DocumentWriter {
  let columns: readonly string[] | undefined = fields;
  let sample: PlainValue[] = [];

  const row = (record: PlainValue, cols: readonly string[]): string => {
    const cells = flattenRecord(record);
    return csvLine(cols.map((column) => cellAt(record, cells, column)));
  };

  /** Fixes the columns from the sample and writes the header and the held records. */
  const release = (): string => {
    if (columns === undefined) columns = sampleColumns(sample);
    const cols = columns;
    const text = (cols.length > 0 ? csvLine(cols) : '') + sample.map((record) => row(record, cols)).join('');
    sample = [];
    return text;
  };

  /** Whether the columns are fixed and the header written; records then go out as they come. */
  let released = false;
  const open = (): string => {
    if (columns === undefined) return '';
    released = true;
    return csvLine(columns);
  };
  const record = (value: PlainValue): string => {
    if (released) return row(value, columns as readonly string[]);
    sample.push(value);
    if (sample.length < sampleSize) return '';
    released = true;
    return release();
  };
  const close = (): string => {
    if (released) return '';
    released = true;
    return release();
  };

  return {
    whole: (value) => open() + recordsOf(value).map(record).join('') + close(),
    envelopeOpen: open,
    envelopeRecord: record,
    envelopeClose: close,
  };
}

function sampleColumns(records: readonly PlainValue[]): string[] {
  const seen = new Set<string>();
  for (const record of records) for (const column of flattenRecord(record).keys()) seen.add(column);
  if (!seen.has('_id')) return [...seen];
  seen.delete('_id');
  return ['_id', ...seen];
}
