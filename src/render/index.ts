/**
 * Rendering of response values into the output formats (docs/api-behaviour.md): `api` (HTML
 * browsable page), `json`, `jsonp`, `xml`, and the record formats `csv` and `ndjson`, whole or streamed.
 */
export type { EnvelopeHead, Format, PageContext, RenderContext, ResponseSink } from './types.js';
export { contentTypeFor, FORMATS, isFormat, isRecordFormat } from './content-types.js';
export { toPlainValue } from './plain-value.js';
export { checkJsonpCallback, isValidJsonpCallback } from './jsonp.js';
export { decodeXmlName, encodeXmlName } from './xml-name.js';
export { isLinkableUrl } from './html-json.js';
export { ResponseClosedError, ResponseStalledError } from './sink-writer.js';
export { renderEnvelopeStream, renderValue } from './render.js';
