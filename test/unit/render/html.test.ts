import escapeHtml from 'escape-html';
import { describe, expect, it } from 'vitest';
import type { PageForm } from '../../../src/render/html-forms.js';
import { browsableScriptPath } from '../../../src/render/html-script.js';
import { isLinkableUrl, renderValue } from '../../../src/render/index.js';
import type { PageContext } from '../../../src/render/index.js';
import { contentPreHtml, contentPreText, FakeSink, pageContext, unescapeHtml } from './support.js';

function renderPage(value: unknown, ctx: PageContext = pageContext(), status = 200): string {
  const sink = new FakeSink();
  renderValue(sink, 'api', status, value, ctx);
  return sink.body;
}

/** All `<a ...>` start tags of a fragment. */
const anchors = (html: string): string[] => html.match(/<a\b[^>]*>/g) ?? [];

describe('HTML page: the value', () => {
  const hostile = {
    '<script>alert("key")</script>': '<script>alert(1)</script>',
    quotes: `double " single ' amp & lt <`,
    textarea: '</textarea><img src=x onerror=alert(1)>',
    pre: '</pre><b>bold</b>',
    nested: [{ '</pre>': null, n: 1.5, t: true }],
  };

  it('pretty-prints exactly JSON.stringify(value, null, 4) inside the <pre>', () => {
    const value = { a: 1, b: [1, 2, { c: [] }], d: {}, e: null, f: 'x', g: [[]], h: -0.5e-7 };
    const page = renderPage(value);
    expect(contentPreText(page)).toBe(JSON.stringify(value, null, 4));
  });

  it('escapes every key and string so no markup from the data survives', () => {
    const page = renderPage(hostile);
    expect(page).not.toMatch(/<script/i);
    expect(page).not.toMatch(/<\/textarea/i);
    expect(page).not.toMatch(/<img/i);
    expect(page).not.toContain('<b>bold</b>');
    // Exactly the page's own <pre> elements close.
    expect((page.match(/<\/pre>/g) ?? []).length).toBe((page.match(/<pre[\s>]/g) ?? []).length);
    // The only markup inside the content <pre> is the printer's own spans and links.
    expect(contentPreHtml(page)).not.toMatch(/<(?!\/?(span|a)\b)/);
    const shown = contentPreText(page);
    expect(JSON.parse(shown)).toEqual(hostile);
    expect(shown).toBe(JSON.stringify(hostile, null, 4));
  });

  it('escapes quotes inside text, never leaving them raw in the content', () => {
    const html = contentPreHtml(renderPage({ q: `"'` }));
    const textOnly = html.replace(/<[^>]*>/g, '');
    expect(textOnly).not.toMatch(/["']/);
    expect(unescapeHtml(textOnly)).toBe(JSON.stringify({ q: `"'` }, null, 4));
  });

  it('turns absolute http(s) URLs into nofollow links and nothing else', () => {
    const value = {
      self: 'https://example.org/api/x/?a=1&b=2',
      plain: 'http://localhost:8080/api/',
      js: 'javascript:alert(1)',
      jsUpper: 'JAVASCRIPT:alert(1)',
      data: 'data:text/html,<script>alert(1)</script>',
      quoted: 'http://example.com/"><script>alert(1)</script>',
      spaced: 'see https://example.org inside text',
      ftp: 'ftp://example.org/file',
      relative: '/api/queue/',
    };
    const page = renderPage(value);
    const links = anchors(contentPreHtml(page));
    expect(links).toEqual([
      '<a href="https://example.org/api/x/?a=1&amp;b=2" rel="nofollow">',
      '<a href="http://localhost:8080/api/" rel="nofollow">',
    ]);
    expect(page).not.toMatch(/href="\s*(javascript|data):/i);
    expect(JSON.parse(contentPreText(page))).toEqual(value);
  });

  it('links only http(s) URLs', () => {
    expect(isLinkableUrl('https://example.org')).toBe(true);
    expect(isLinkableUrl('HTTP://EXAMPLE.ORG/x')).toBe(true);
    expect(isLinkableUrl('javascript:alert(1)')).toBe(false);
    expect(isLinkableUrl('https://')).toBe(false);
    expect(isLinkableUrl('https://exa mple.org')).toBe(false);
    expect(isLinkableUrl('https://example.org/\u0000')).toBe(false);
    expect(isLinkableUrl(' https://example.org')).toBe(false);
  });
});

describe('HTML page: the surroundings', () => {
  it('is a full page with title, breadcrumbs, request line and header block', () => {
    const page = renderPage({ ok: true });
    expect(page.startsWith('<!DOCTYPE html>')).toBe(true);
    expect(page).toContain('<title>col1 – Cybercommons</title>');
    expect(page).toContain('<a href="/api/" class="brand">Cybercommons</a>');
    expect(page).toContain('<h1>col1</h1>');
    const crumbs = /<ul class="breadcrumb">([\s\S]*?)<\/ul>/.exec(page)?.[1] ?? '';
    expect(anchors(crumbs)).toEqual([
      '<a href="/api/">',
      '<a href="/api/data_store/data/">',
      '<a href="/api/data_store/data/db1/">',
      '<a href="/api/data_store/data/db1/col1/">',
    ]);
    expect(page).toContain('<pre class="request"><b>GET</b> /api/data_store/data/db1/col1/?page=2&amp;query=%7B%7D</pre>');
    expect(page).toContain('<b>HTTP 200 OK</b>\n<b>Allow:</b> GET, POST, OPTIONS\n<b>Content-Type:</b> application/json');
    expect(page.trimEnd().endsWith('</html>')).toBe(true);
  });

  it('shows the status of error responses', () => {
    const page = renderPage({ error: { status: 404 } }, pageContext({ allow: undefined }), 404);
    expect(page).toContain('<b>HTTP 404 Not Found</b>');
    expect(page).not.toContain('Allow:');
  });

  it('links the other formats, keeping the other query parameters', () => {
    const page = renderPage(
      {},
      pageContext({ requestUrl: 'http://h.example/api/data_store/data/db/col/?query=%7B%22a%22%3A1%7D&format=api&page=2' }),
    );
    const formats = /<div class="formats">([\s\S]*?)<\/div>/.exec(page)?.[1] ?? '';
    const hrefs = [...formats.matchAll(/href="([^"]*)"/g)].map((match) => unescapeHtml(match[1] ?? ''));
    expect(hrefs).toHaveLength(6);
    const parsed = hrefs.map((href) => new URL(href, 'http://h.example'));
    expect(parsed.map((url) => url.searchParams.get('format'))).toEqual(['api', 'json', 'jsonp', 'xml', 'csv', 'ndjson']);
    for (const url of parsed) {
      expect(url.pathname).toBe('/api/data_store/data/db/col/');
      expect(url.searchParams.getAll('format')).toHaveLength(1);
      expect(url.searchParams.get('query')).toBe('{"a":1}');
      expect(url.searchParams.get('page')).toBe('2');
    }
  });

  it('drops a format path suffix from the format links', () => {
    const page = renderPage({}, pageContext({ requestUrl: 'http://h/api/queue/run/tasks.add/.api' }));
    expect(page).toContain('href="/api/queue/run/tasks.add/?format=json"');
  });

  it('shows the user with a logout link, or a login link back to this page', () => {
    const loggedIn = renderPage({}, pageContext({ user: { username: '<b>bob</b>' } }));
    expect(loggedIn).toContain('&lt;b&gt;bob&lt;/b&gt;');
    expect(loggedIn).not.toContain('<b>bob</b>');
    expect(loggedIn).toContain('<a href="/api/auth/logout/">Log out</a>');
    expect(loggedIn).not.toContain('/api/auth/login/');

    const anonymous = renderPage({}, pageContext({ user: null, requestUrl: 'http://h/api/data_store/data/?page=2&x=1' }));
    const login = /<a href="([^"]*)">Log in<\/a>/.exec(anonymous)?.[1];
    expect(login).toBeDefined();
    const url = new URL(unescapeHtml(login ?? ''), 'http://h');
    expect(url.pathname).toBe('/api/auth/login/');
    expect(url.searchParams.get('next')).toBe('/api/data_store/data/?page=2&x=1');
    expect(anonymous).not.toContain('/api/auth/logout/');
  });

  it('shows unsafe breadcrumb links as text and escapes their names', () => {
    const page = renderPage(
      {},
      pageContext({
        breadcrumbs: [
          { name: 'Api Root', href: '/api/' },
          { name: '<i>db</i>', href: 'javascript:alert(1)' },
          { name: 'other', href: '//evil.example/' },
        ],
      }),
    );
    expect(page).not.toMatch(/href="(javascript:|\/\/)/);
    expect(page).toContain('<span>&lt;i&gt;db&lt;/i&gt;</span>');
    expect(page).not.toContain('<i>db</i>');
  });

  it('is self-contained: one nonce-carrying <style>, no script, no handlers, nothing external', () => {
    const page = renderPage({ link: 'https://cdn.example/x.js' }, pageContext({ cspNonce: 'abc"123' }));
    expect(page.match(/<style\b[^>]*>/g)).toEqual(['<style nonce="abc&quot;123">']);
    expect(page).not.toMatch(/<script/i);
    expect(page).not.toMatch(/\son[a-z]+\s*=/i);
    expect(page).not.toMatch(/<link\b/i);
    expect(page).not.toMatch(/\bsrc\s*=/i);
    expect(page).not.toMatch(/@import|url\(/i);
    expect(page).not.toMatch(/style="/i);

    const withoutNonce = renderPage({}, pageContext({ cspNonce: undefined }));
    expect(withoutNonce.match(/<style\b[^>]*>/g)).toEqual(['<style>']);
  });
});

describe('HTML page: a hostile request and context', () => {
  const EVIL = `<img src=x onerror=alert(1)>" onmouseover="alert(2)' &amp;`;
  /** The elements the page itself writes; anything else came from the data. */
  const OWN_TAGS = new Set(
    'html head meta title style body header a span nav ul li main div h1 pre b form h2 p label textarea input button noscript script'.split(
      ' ',
    ),
  );
  const OWN_ATTRIBUTES = new Set(
    'lang charset name content nonce href class rel aria-label aria-live hidden id for type spellcheck placeholder autocomplete value src defer'.split(
      ' ',
    ),
  );
  const forms: PageForm[] = [
    { kind: 'collection', postUrl: `/api/data_store/data/db/${encodeURIComponent(EVIL)}/` },
    { kind: 'record', postUrl: '/api/data_store/data/db/col/1/' },
    { kind: 'databases', postUrl: '/api/data_store/data/' },
    { kind: 'indexes', postUrl: '/api/data_store/indexes/db/col/' },
    { kind: 'schedule', postUrl: '/api/queue/schedules/' },
    { kind: 'task-run', postUrl: '/api/queue/run/t/', task: EVIL, doc: EVIL },
    {
      kind: 'task-run',
      postUrl: '/api/queue/run/t/',
      task: EVIL,
      signature: {
        text: `(${EVIL})`,
        parameters: [
          { name: EVIL, kind: 'positional_or_keyword', default: EVIL, annotation: EVIL },
          { name: 'r', kind: EVIL, default: EVIL, defaultIsRepr: true },
        ],
      },
    },
  ];

  it('writes the title, user, breadcrumbs, allowed methods, related links, request line, paging links and every form field as text', () => {
    for (const form of forms) {
      const ctx = pageContext({
        title: EVIL,
        requestUrl: `http://localhost/api/x/?q=${EVIL}`,
        breadcrumbs: [
          { name: EVIL, href: `/api/${EVIL}` },
          { name: EVIL, href: EVIL },
        ],
        user: { username: EVIL },
        allow: ['GET', EVIL],
        related: [{ name: EVIL, href: `/api/explore/${EVIL}` }],
        cspNonce: EVIL,
        form,
      });
      const head = { count: 3, meta: { page: 2, page_size: 1, pages: 3 }, next: `http://localhost/api/x/?p=${EVIL}`, previous: EVIL };
      const page = renderPage({ count: 3, meta: head.meta, next: head.next, previous: head.previous, results: [{ [EVIL]: EVIL }] }, ctx);
      for (const [, name] of page.matchAll(/<([a-zA-Z][a-zA-Z0-9]*)/g)) expect(OWN_TAGS.has(name as string), `<${name}>`).toBe(true);
      expect(page).not.toMatch(/\son[a-z]+\s*=\s*"/i);
      expect(page).not.toContain('<img');
      // Each element has only the page's own attributes: a hostile quote never ends a value early.
      for (const [tag] of page.matchAll(/<[a-z][^>]*>/g)) {
        const rest = tag.replace(/^<[a-z0-9]+/, '').replace(/\s([a-z-]+)(="[^"]*")?/g, (_, name: string) => {
          expect(OWN_ATTRIBUTES.has(name) || name.startsWith('data-'), `${name} in ${tag}`).toBe(true);
          return '';
        });
        expect(rest, tag).toBe('>');
      }
      expect(page).toContain('&lt;img src=x onerror=alert(1)&gt;&quot; onmouseover=&quot;alert(2)&#39; &amp;amp;');
      expect(page.match(/<script\b[^>]*>/g)).toEqual([`<script src="${browsableScriptPath()}" nonce="${escapeHtml(EVIL)}" defer>`]);
    }
  });
});
