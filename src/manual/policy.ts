/**
 * The manual's Content-Security-Policy. VitePress writes a few inline scripts into every page
 * (the colour-scheme check, the page-chunk map) and its code highlighting colours tokens with
 * style attributes, so the browsable pages' nonce policy does not fit: the manual's own policy
 * allows exactly those inline scripts and style values by their SHA-256 hashes, read from the
 * built pages (and the one style sheet its code adds, COLOUR_SWITCH_STYLE), and nothing inline besides. Same origin only: no host outside the server.
 */
import { createHash } from 'node:crypto';
import { policyText } from '../http/security-headers.js';

export interface InlineContent {
  /** The text of every inline <script> (one without a src). */
  scripts: Set<string>;
  /** The value of every style="…" attribute, as the browser reads it (entities decoded). */
  styleAttributes: Set<string>;
}

/**
 * The one <style> element the pages' code adds: while the colour scheme changes, VitePress's
 * colour-mode helper (VueUse) adds this sheet for a moment so nothing animates. Allowed by its
 * hash; the browser test of the manual catches a version that writes another.
 */
export const COLOUR_SWITCH_STYLE =
  '*,*::before,*::after{-webkit-transition:none!important;-moz-transition:none!important;-o-transition:none!important;-ms-transition:none!important;transition:none!important}';

const INLINE_SCRIPT = /<script\b(?![^>]*\bsrc\s*=)[^>]*>([\s\S]*?)<\/script\s*>/gi;
const STYLE_ATTRIBUTE = /\sstyle\s*=\s*(?:"([^"]*)"|'([^']*)')/gi;
const ENTITIES: Record<string, string> = { amp: '&', quot: '"', apos: "'", lt: '<', gt: '>', '#39': "'", '#x27': "'" };

function decodeEntities(value: string): string {
  return value.replace(/&(amp|quot|apos|lt|gt|#39|#x27);/g, (_all, name: string) => ENTITIES[name] ?? '');
}

/** Adds the inline scripts and style attributes of one page to `into`. */
export function collectInline(html: string, into: InlineContent): void {
  for (const match of html.matchAll(INLINE_SCRIPT)) into.scripts.add(match[1] ?? '');
  for (const match of html.matchAll(STYLE_ATTRIBUTE)) into.styleAttributes.add(decodeEntities(match[1] ?? match[2] ?? ''));
}

const sha256 = (text: string): string => `'sha256-${createHash('sha256').update(text, 'utf8').digest('base64')}'`;

export function manualPolicy(inline: InlineContent): string {
  const scripts = [...inline.scripts]
    .filter((text) => text.trim() !== '')
    .map(sha256)
    .sort();
  const styles = [...new Set([...inline.styleAttributes, COLOUR_SWITCH_STYLE])].map(sha256).sort();
  // 'unsafe-hashes' lets the hashes cover style attributes, and only the listed values.
  return policyText({ scripts, styles: ["'unsafe-hashes'", ...styles] });
}
