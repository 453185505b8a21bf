import { describe, expect, it } from 'vitest';
import { html, Html, joinHtml, raw } from '../../../src/render/html-template.js';

const HOSTILE = `<script>alert("x")</script>&'`;
const ESCAPED = '&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&amp;&#39;';

describe('html tagged template', () => {
  it('escapes every interpolated string, in text and in attribute values', () => {
    const out = html`<td title="${HOSTILE}">${HOSTILE}</td>`;
    expect(out).toBeInstanceOf(Html);
    expect(out.text).toBe(`<td title="${ESCAPED}">${ESCAPED}</td>`);
    expect(String(out)).toBe(out.text);
  });

  it('writes numbers as text, and nothing for undefined, null and false', () => {
    expect(html`${1.5}|${0}|${undefined}|${null}|${false}|${true}`.text).toBe('1.5|0||||true');
  });

  it('writes raw(…) and nested html`…` as they are: the marked exceptions', () => {
    const inner = html`<b>${HOSTILE}</b>`;
    expect(html`<p>${inner}${raw('<i>kept</i>')}</p>`.text).toBe(`<p><b>${ESCAPED}</b><i>kept</i></p>`);
  });

  it('escapes each item of an array unless it is HTML, joined with nothing between', () => {
    expect(html`<ul>${['<a>', html`<li>${'<b>'}</li>`]}</ul>`.text).toBe('<ul>&lt;a&gt;<li>&lt;b&gt;</li></ul>');
  });

  it('joins items with a separator, escaping a text separator', () => {
    expect(joinHtml(['<x>', raw('<y>')], raw('<br>')).text).toBe('&lt;x&gt;<br><y>');
    expect(joinHtml(['a', 'b'], ' & ').text).toBe('a &amp; b');
  });
});
