/**
 * Rendering of response values into the four output formats (docs/api-behaviour.md): `api` (HTML
 * browsable page), `json`, `jsonp`, `xml`, whole or streamed.
 */
export type { EnvelopeHead, Format, PageContext, RenderContext, ResponseSink } from './types.js';
export { contentTypeFor, FORMATS, isFormat } from './content-types.js';
export { toPlainValue } from './plain-value.js';
export { checkJsonpCallback, isValidJsonpCallback } from './jsonp.js';
export { decodeXmlName, encodeXmlName } from './xml-name.js';
export { isLinkableUrl } from './html-json.js';
export { ResponseClosedError } from './sink-writer.js';
export { renderEnvelopeStream, renderValue } from './render.js';
