import { ApiError } from '../errors.js';
import { maxJsonBytes } from './bson-json.js';
import { BsonRecord } from './bson-record.js';
import { contentTypeFor } from './content-types.js';
import { csvDocument } from './csv.js';
import type { DocumentWriter } from './document.js';
import { htmlDocument } from './html.js';
import { jsonDocument } from './json.js';
import { ndjsonDocument } from './ndjson.js';
import { checkJsonpCallback, jsonpDocument } from './jsonp.js';
import { toPlainValue } from './plain-value.js';
import { SinkWriter } from './sink-writer.js';
import type { EnvelopeHead, Format, RenderContext, ResponseSink } from './types.js';
import { xmlDocument } from './xml.js';

/** Stream responses are envelopes of a successful list or query. */
const STREAM_STATUS = 200;

/**
 * The serializer for a response. Throws (before anything is written) a 400 for a JSONP callback
 * that is not a safe identifier, and for a format name that is not one of ours.
 */
export function documentWriterFor(format: Format, status: number, ctx: RenderContext): DocumentWriter {
  switch (format) {
    case 'json':
      return jsonDocument;
    case 'jsonp':
      return jsonpDocument(checkJsonpCallback(ctx.callback));
    case 'xml':
      return xmlDocument;
    case 'api':
      return htmlDocument(status, ctx);
    case 'csv':
      return csvDocument(ctx.fields);
    case 'ndjson':
      return ndjsonDocument;
    default:
      throw new ApiError(400, 'invalid_format', `Unknown format "${String(format)}"; use api, json, jsonp, xml, csv or ndjson.`);
  }
}

function startResponse(sink: ResponseSink, format: Format, status: number): void {
  sink.status(status);
  sink.setHeader('Content-Type', contentTypeFor(format));
}

/**
 * Renders a complete value in one piece. The value goes through toPlainValue first (a no-op on
 * plain JSON) so that every format renders the same tree, even if a BSON value slipped through.
 * The one exception is a record still in its bytes answered as JSON: its JSON is written from
 * the bytes, the same text without the objects.
 */
export function renderValue(sink: ResponseSink, format: Format, status: number, value: unknown, ctx: RenderContext): void {
  const writer = documentWriterFor(format, status, ctx);
  const json = format === 'json' && value instanceof BsonRecord ? value.jsonBytes() : undefined;
  const body = json ?? writer.whole(toPlainValue(value));
  startResponse(sink, format, status);
  sink.end(body);
}

/**
 * Streams an envelope `{count, meta, next, previous, results}` whose records come from an async
 * iterable (a cursor), for `page_size=0` results of any size: neither the records nor the text
 * are ever held whole; output is written in bounded chunks, and the iterable is not pulled while
 * the client is not reading (backpressure). The bytes equal renderValue's for the same envelope.
 *
 * If the iterable (or the client) fails:
 * - before anything was written: the sink is left untouched, so the caller can still answer with
 *   a proper error response;
 * - mid-way: the document is left unterminated, never completed; a page for people (`api`) gets a
 *   visible notice and is ended, the machine formats are cut off by destroying the connection
 *   (when the sink can), so a client sees a failed transfer rather than a short, valid-looking one.
 * In both cases the error is rethrown for the caller to log; leaving the for-await loop closes
 * the iterator (and so the cursor). So does a client that stops reading for `sendTimeoutMs`
 * (0: no limit; see SinkWriter): its connection is cut, with a ResponseStalledError.
 */
export async function renderEnvelopeStream(
  sink: ResponseSink,
  format: Format,
  head: EnvelopeHead,
  records: AsyncIterable<unknown>,
  ctx: RenderContext,
  sendTimeoutMs = 0,
): Promise<void> {
  const writer = documentWriterFor(format, STREAM_STATUS, ctx);
  const out = new SinkWriter(sink, () => startResponse(sink, format, STREAM_STATUS), sendTimeoutMs);
  let index = 0;
  try {
    await out.push(writer.envelopeOpen(head));
    for await (const record of records) {
      // Awaited once a chunk (about 64 KB), not once a record: a long download is mostly records.
      if (addRecord(out, writer, record, index)) await out.flush();
      index += 1;
    }
    await out.push(writer.envelopeClose(index));
  } catch (error) {
    abort(sink, out, writer);
    throw error;
  }
  out.end();
}

/**
 * Adds one record; true when a flush is due. A record read as BSON goes to a JSON format as JSON
 * written from its bytes when it can, without becoming objects or text.
 */
function addRecord(out: SinkWriter, writer: DocumentWriter, record: unknown, index: number): boolean {
  if (record instanceof BsonRecord) {
    if (writer.recordJsonFrame !== undefined) {
      const [before, after] = writer.recordJsonFrame(index);
      const due = out.addBytes(before.length + maxJsonBytes(record.bytes.length) + after.length, (target, offset) => {
        const end = record.writeJson(target, offset + target.write(before, offset, 'latin1'));
        return end < 0 ? -1 : end + target.write(after, end, 'latin1');
      });
      if (due !== undefined) return due;
    } else if (writer.envelopeRecordJson !== undefined) {
      const json = record.json();
      if (json !== undefined) return out.add(writer.envelopeRecordJson(json, index));
    }
  }
  return out.add(writer.envelopeRecord(toPlainValue(record), index));
}

function abort(sink: ResponseSink, out: SinkWriter, writer: DocumentWriter): void {
  const pending = out.takePending();
  if (!out.hasStarted || sink.destroyed === true) return;
  if (writer.abortNotice !== undefined) {
    // Pending pieces are whole records, so the notice lands right after the last complete one.
    sink.end(Buffer.concat([pending, Buffer.from(writer.abortNotice, 'utf8')]));
  } else if (typeof sink.destroy === 'function') {
    sink.destroy();
  } else {
    sink.end();
  }
}
