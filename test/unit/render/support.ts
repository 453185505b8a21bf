import { XMLParser } from 'fast-xml-parser';
import type { PageContext, ResponseSink } from '../../../src/render/index.js';

/** Chunks are whole pieces of UTF-8 (never a character cut in two), so each decodes on its own. */
const text = (chunk: string | Uint8Array): string => (typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8'));

/**
 * An in-memory ResponseSink. `accept` decides what each write returns (true = keep writing);
 * when a write returns false the sink counts as full until `emitDrain()`, and any write while full
 * is recorded as a backpressure violation.
 */
export class FakeSink implements ResponseSink {
  statusCode: number | undefined;
  readonly headers = new Map<string, string>();
  readonly chunks: string[] = [];
  ended = false;
  destroyed = false;
  full = false;
  violations = 0;
  writesAfterEnd = 0;
  private drainListeners: (() => void)[] = [];
  private closeListeners: (() => void)[] = [];

  constructor(private readonly accept: (writeNumber: number) => boolean = () => true) {}

  status(code: number): this {
    this.statusCode = code;
    return this;
  }

  setHeader(name: string, value: string): this {
    this.headers.set(name.toLowerCase(), value);
    return this;
  }

  write(chunk: string | Uint8Array): boolean {
    if (this.ended) this.writesAfterEnd += 1;
    if (this.full) this.violations += 1;
    this.chunks.push(text(chunk));
    const ok = this.accept(this.chunks.length);
    if (!ok) this.full = true;
    return ok;
  }

  end(chunk?: string | Uint8Array): this {
    if (this.ended) this.writesAfterEnd += 1;
    if (chunk !== undefined) this.chunks.push(text(chunk));
    this.ended = true;
    return this;
  }

  once(event: 'drain' | 'close', cb: () => void): this {
    (event === 'drain' ? this.drainListeners : this.closeListeners).push(cb);
    return this;
  }

  get waitingForDrain(): boolean {
    return this.drainListeners.length > 0;
  }

  emitDrain(): void {
    this.full = false;
    const listeners = this.drainListeners;
    this.drainListeners = [];
    for (const listener of listeners) listener();
  }

  emitClose(): void {
    const listeners = this.closeListeners;
    this.closeListeners = [];
    for (const listener of listeners) listener();
  }

  get body(): string {
    return this.chunks.join('');
  }
}

/** FakeSink has no destroy(); this one has, like express's res. */
export class DestroyableSink extends FakeSink {
  destroyCalls = 0;
  destroy(): void {
    this.destroyCalls += 1;
    this.destroyed = true;
  }
}

export const pageContext = (overrides: Partial<PageContext> = {}): PageContext => ({
  title: 'Cybercommons',
  requestUrl: 'http://localhost:8080/api/data_store/data/db1/col1/?page=2&query=%7B%7D',
  breadcrumbs: [
    { name: 'Api Root', href: '/api/' },
    { name: 'Data Store', href: '/api/data_store/data/' },
    { name: 'db1', href: '/api/data_store/data/db1/' },
    { name: 'col1', href: '/api/data_store/data/db1/col1/' },
  ],
  user: { username: 'alice' },
  method: 'GET',
  allow: ['GET', 'POST', 'OPTIONS'],
  cspNonce: 'n0nce-abc',
  ...overrides,
});

/** Decodes the five entities escape-html produces (written here, not taken from the code under test). */
export function unescapeHtml(text: string): string {
  return text
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&amp;/g, '&');
}

/** The inner HTML of the page's `<pre class="content">`. */
export function contentPreHtml(page: string): string {
  const match = /<pre class="content">([\s\S]*?)<\/pre>/.exec(page);
  if (!match?.[1]) throw new Error('no <pre class="content"> in page');
  return match[1];
}

/** The text a browser would show for the content <pre>: tags removed, entities decoded. */
export function contentPreText(page: string): string {
  return unescapeHtml(contentPreHtml(page).replace(/<[^>]*>/g, ''));
}

/** A parser that keeps every text as a string and every `<list-item>` as an array element. */
export function parseXml(xml: string): unknown {
  const parser = new XMLParser({
    isArray: (name) => name === 'list-item',
    parseTagValue: false,
    trimValues: false,
    htmlEntities: true,
  });
  return parser.parse(xml);
}

/** Strips the JSONP wrapper `/**\/name(...);` and returns the callback name and the JSON text. */
export function unwrapJsonp(body: string): { callback: string; json: string } {
  const match = /^\/\*\*\/([A-Za-z0-9_$.]+)\(([\s\S]*)\);$/.exec(body);
  if (!match?.[1] || match[2] === undefined) throw new Error(`not a JSONP body: ${body.slice(0, 80)}`);
  return { callback: match[1], json: match[2] };
}

export async function* fromArray<T>(items: readonly T[]): AsyncGenerator<T> {
  for (const item of items) yield item;
}

/** Lets pending promise callbacks and timers run. */
export const tick = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));
