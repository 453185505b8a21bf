/**
 * Rendering of response values into the four output formats (CONTRACT.md §2): `api` (HTML
 * browsable page), `json`, `jsonp`, `xml`, whole or streamed.
 */
export type { EnvelopeHead, Format, PageContext, PlainValue, RenderContext, ResponseSink } from './types.js';
export type { DocumentWriter } from './document.js';
export { contentTypeFor, FORMATS, isFormat } from './content-types.js';
export { toPlainValue } from './plain-value.js';
export { DEFAULT_JSONP_CALLBACK, isValidJsonpCallback } from './jsonp.js';
export { decodeXmlName, encodeXmlName } from './xml-name.js';
export { isLinkableUrl } from './html-json.js';
export { ResponseClosedError } from './sink-writer.js';
export { documentWriterFor, renderEnvelopeStream, renderValue } from './render.js';
