import type { DocumentWriter } from './document.js';
import { plainJson } from './plain-json.js';
import { recordsOf } from './records.js';

const LINE_FRAME = ['', '\n'] as const;

/**
 * Newline-delimited JSON: one record per line, as the JSON format renders records, without the
 * envelope. A whole value is written as its records (see recordsOf).
 */
export const ndjsonDocument: DocumentWriter = {
  whole: (value) =>
    recordsOf(value)
      .map((record) => `${plainJson(record)}\n`)
      .join(''),
  envelopeOpen: () => '',
  envelopeRecord: (record) => `${plainJson(record)}\n`,
  envelopeRecordJson: (json) => `${json}\n`,
  recordJsonFrame: () => LINE_FRAME,
  envelopeClose: () => '',
};
