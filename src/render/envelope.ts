import type { EnvelopeHead, PlainValue } from './types.js';

/** Name of the envelope member that streams; it always comes last. */
export const RESULTS_KEY = 'results';

/**
 * The envelope members that precede `results`, in the order a whole-value rendering of
 * `{count, meta, next, previous, results}` emits them. Every streaming serializer builds its head
 * from this list so that streamed and whole renderings agree byte for byte.
 */
export function envelopeHeadEntries(head: EnvelopeHead): [string, PlainValue][] {
  return [
    ['count', head.count],
    ['meta', { page: head.meta.page, page_size: head.meta.page_size, pages: head.meta.pages }],
    ['next', head.next],
    ['previous', head.previous],
  ];
}
