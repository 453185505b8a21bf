import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { BROWSER_SCRIPTS, browserScript, bundleBrowserScripts, writeBundles } from '../../../src/http/browser-bundle.js';

describe('the browser scripts', () => {
  it('bundles each source into one classic script (no import or export left), reading the element it draws', () => {
    const scripts = bundleBrowserScripts();
    expect(Object.keys(scripts).sort()).toEqual([...BROWSER_SCRIPTS].sort());
    expect(scripts.chart).toContain('explorer-chart');
    expect(scripts.map).toContain('explorer-map');
    expect(scripts.histogram).toContain('svg[data-brush]');
    expect(scripts.browsable).toContain('form[data-browsable]');
    expect(scripts.browsable).toContain('X-CSRFToken');
    for (const name of BROWSER_SCRIPTS) {
      expect(scripts[name]).not.toMatch(/^\s*(import|export)\b/m);
      // A syntax check of the bundle as a classic script (not run: it needs a DOM).
      expect(() => new Function(scripts[name])).not.toThrow();
    }
  });

  it('serves the same bundle the build writes, each beside its source folder', () => {
    const dir = mkdtempSync(join(tmpdir(), 'browser-scripts-'));
    try {
      const scripts = bundleBrowserScripts();
      writeBundles(dir, scripts);
      expect(readFileSync(join(dir, 'src', 'explorer', 'browser', 'map.js'), 'utf8')).toBe(scripts.map);
      expect(readFileSync(join(dir, 'src', 'render', 'browser', 'browsable.js'), 'utf8')).toBe(scripts.browsable);
      for (const name of BROWSER_SCRIPTS) expect(browserScript(name)).toBe(scripts[name]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
