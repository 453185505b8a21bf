/**
 * Shapes shared by the renderers. Kept free of express so the renderers can be unit-tested with
 * a fake sink; express's `res` satisfies ResponseSink structurally.
 */

import type { PageForm } from './html-forms.js';

/**
 * The output formats (docs/api-behaviour.md; `api` is the browsable HTML page). `csv` and
 * `ndjson` are record formats: a listing's records without the envelope.
 */
export type Format = 'api' | 'json' | 'jsonp' | 'xml' | 'csv' | 'ndjson';

/**
 * The minimal writable response the renderers need. `once('close')` and `destroy` are used when
 * present: 'close' lets a stream stop waiting for 'drain' once the client has gone, and `destroy`
 * cuts the connection when a stream fails mid-way (see render.ts) or the client stops reading
 * (the send timeout, see sink-writer.ts, which also watches `writableLength` and 'finish').
 */
export interface ResponseSink {
  status(code: number): unknown;
  setHeader(name: string, value: string): unknown;
  /** `callback`: called once the connection has taken the chunk (it may then be written over). */
  write(chunk: Uint8Array, callback?: (error?: Error | null) => void): boolean;
  end(chunk?: string | Uint8Array): unknown;
  once(event: 'drain' | 'close' | 'finish', cb: () => void): unknown;
  destroy?(error?: Error): unknown;
  readonly destroyed?: boolean;
  /** Bytes written but not yet taken by the connection. */
  readonly writableLength?: number;
}

/** What the browsable HTML page shows around the value. */
export interface PageContext {
  /** Application title, e.g. "Cybercommons". */
  title: string;
  /** Absolute URL of this request (for the header block and the format links). */
  requestUrl: string;
  /** Api Root / Database / Collection / Record. */
  breadcrumbs: { name: string; href: string }[];
  /** Shown top right with a logout link, else a login link. */
  user: { username: string } | null;
  /** Request method, shown like DRF: "GET /api/data_store/data/". */
  method: string;
  /** Allowed methods, shown in the header block. */
  allow?: string[];
  /** Nonce for the page's single inline <style>. */
  cspNonce?: string;
  /** A form under the response (html-forms.ts), from `res.locals.form`. */
  form?: PageForm;
  /** Other pages about the same resource (the explorer's view of a collection), shown beside the format links. */
  related?: readonly { name: string; href: string }[];
}

/** PageContext plus the JSONP callback name (default `callback`) and the CSV columns (`fields`). */
export type RenderContext = PageContext & { callback?: string; fields?: readonly string[] };

/** Everything of the paged envelope except `results` (docs/api-behaviour.md, "Paging"). */
export interface EnvelopeHead {
  count: number;
  meta: { page: number; page_size: number; pages: number };
  next: string | null;
  previous: string | null;
}

/**
 * A BSON double whose value is a whole number (3, -0, 1e20): JavaScript writes it `3`, which
 * reads back as an integer, so the serializers write it `3.0` (see doubleText). Every other
 * double is a plain number: its text already holds a `.` or an exponent.
 */
export class IntegralDouble {
  constructor(readonly value: number) {}

  /** For JSON.stringify, which cannot write `3.0`: the number (the serializers do not take this path). */
  toJSON(): number {
    return this.value;
  }
}

/** A JSON-safe value: what toPlainValue produces and what the serializers accept. */
export type PlainValue = null | boolean | number | string | IntegralDouble | PlainValue[] | { [key: string]: PlainValue };
