import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { COLOUR_SWITCH_STYLE, collectInline, manualPolicy, type InlineContent } from '../../../src/manual/policy.js';

const hash = (text: string) => `'sha256-${createHash('sha256').update(text).digest('base64')}'`;
const empty = (): InlineContent => ({ scripts: new Set(), styleAttributes: new Set() });

describe('the manual policy', () => {
  it('collects inline scripts but not scripts loaded from a file', () => {
    const inline = empty();
    collectInline(
      '<script type="module" src="/api/manual/assets/app.js"></script><script id="a">one()</script>\n<SCRIPT>two()</SCRIPT >',
      inline,
    );
    expect([...inline.scripts]).toEqual(['one()', 'two()']);
  });

  it('collects style attribute values as the browser reads them', () => {
    const inline = empty();
    collectInline(`<span style="--c:#fff;">a</span><i style='x:"y"'></i><b style="content:&quot;&amp;&quot;"></b>`, inline);
    expect([...inline.styleAttributes]).toEqual(['--c:#fff;', 'x:"y"', 'content:"&"']);
  });

  it('allows exactly the collected scripts and style values by hash, and nothing else inline', () => {
    const inline = empty();
    collectInline('<script>one()</script><p style="color:red"></p><script>one()</script>', inline);
    const policy = manualPolicy(inline);
    const directive = (name: string) =>
      policy
        .split('; ')
        .find((d) => d.startsWith(`${name} `))
        ?.split(' ')
        .slice(1);
    expect(directive('script-src')).toEqual(["'self'", hash('one()')]);
    expect(directive('style-src')).toEqual(["'self'", "'unsafe-hashes'", ...[hash('color:red'), hash(COLOUR_SWITCH_STYLE)].sort()]);
    expect(policy).not.toContain('unsafe-inline');
    expect(directive('default-src')).toEqual(["'self'"]);
    expect(directive('connect-src')).toEqual(["'self'"]);
    expect(directive('frame-ancestors')).toEqual(["'none'"]);
  });

  it('allows only the colour switch style sheet when no page has a style attribute', () => {
    expect(manualPolicy(empty())).toContain(`style-src 'self' 'unsafe-hashes' ${hash(COLOUR_SWITCH_STYLE)};`);
  });
});
