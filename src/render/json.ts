import type { DocumentWriter } from './document.js';
import { envelopeHeadEntries, RESULTS_KEY } from './envelope.js';
import { plainJson } from './plain-json.js';
import type { EnvelopeHead, PlainValue } from './types.js';

const FIRST_FRAME = ['', ''] as const;
const NEXT_FRAME = [',', ''] as const;

/**
 * Compact JSON (no whitespace), as JSON.stringify writes it (but for whole doubles, see plainJson). Compact output is what makes the
 * streamed envelope trivially identical to the whole one: JSON.stringify of an object is the
 * concatenation of its members' JSON.
 */
export const jsonDocument: DocumentWriter = {
  whole: (value) => stringify(value),

  envelopeOpen: (head: EnvelopeHead) => {
    const members = envelopeHeadEntries(head).map(([key, value]) => `${JSON.stringify(key)}:${stringify(value)}`);
    return `{${members.join(',')},${JSON.stringify(RESULTS_KEY)}:[`;
  },

  envelopeRecord: (record, index) => (index === 0 ? '' : ',') + stringify(record),

  envelopeRecordJson: (json, index) => (index === 0 ? '' : ',') + json,

  recordJsonFrame: (index) => (index === 0 ? FIRST_FRAME : NEXT_FRAME),

  envelopeClose: () => ']}',
};

function stringify(value: PlainValue): string {
  return plainJson(value);
}
