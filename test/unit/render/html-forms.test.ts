/** The task-run form built from a task's signature (the fields; the script's part is in test/e2e). */
import { describe, expect, it } from 'vitest';
import { isPageForm, pageFormHtml, type PageForm } from '../../../src/render/html-forms.js';

const form = (overrides: Partial<PageForm> = {}): PageForm => ({
  kind: 'task-run',
  postUrl: '/api/queue/run/proj.scale/',
  task: 'proj.scale',
  ...overrides,
});

/** The `<input>` tags of the parameter fields. */
const parameterInputs = (html: string): string[] => html.match(/<input[^>]*data-param-kind[^>]*>/g) ?? [];

describe('task-run form with a signature', () => {
  const signature = {
    text: "(values: list, factor=2.0, /, *rest, label='<b>', since=datetime.date(2024, 1, 2), **options)",
    parameters: [
      { name: 'values', kind: 'positional_only', annotation: 'list' },
      { name: 'factor', kind: 'positional_only', default: 2.5 },
      { name: 'rest', kind: 'var_positional' },
      { name: 'label', kind: 'keyword_only', default: '"</textarea><b>' },
      { name: 'since', kind: 'keyword_only', default: 'datetime.date(2024, 1, 2)', defaultIsRepr: true },
      { name: 'options', kind: 'var_keyword' },
    ],
  };

  it('has one field per parameter, JSON defaults pre-filled, the others empty, in order', () => {
    const html = pageFormHtml(form({ signature, doc: 'Scale <values>.\n\nMore.' }), true).text;
    const inputs = parameterInputs(html);
    expect(inputs.map((i) => /data-param-name="([^"]*)"/.exec(i)?.[1])).toEqual(['values', 'factor', 'rest', 'label', 'since', 'options']);
    expect(inputs.map((i) => /value="([^"]*)"/.exec(i)?.[1])).toEqual([
      '',
      '2.5',
      '',
      '&quot;\\&quot;&lt;/textarea&gt;&lt;b&gt;&quot;',
      '',
      '',
    ]);
    expect(inputs.map((i) => i.includes('data-param-required'))).toEqual([true, false, false, false, false, false]);
    expect(inputs[4]).toContain('placeholder="default: datetime.date(2024, 1, 2)"');
    expect(inputs[2]).toContain('placeholder="[]"');
    expect(html).toContain(
      '<form class="api-form" data-browsable="task-run" data-url="/api/queue/run/proj.scale/" data-task="proj.scale" data-signature hidden>',
    );
    expect(html).toContain('<label for="api-form-param-0">values: list</label>');
    expect(html).toContain('<label for="api-form-param-5">**options</label>');
    expect(html).toContain('<p class="doc">Scale &lt;values&gt;.\n\nMore.</p>');
    expect(html).toContain('<p class="signature">proj.scale(values: list, factor=2.0, /, *rest, label=&#39;&lt;b&gt;&#39;,');
    // The free-form boxes are replaced; tags and queue stay.
    expect(html).not.toContain('name="args"');
    expect(html).not.toContain('name="kwargs"');
    expect(html).toContain('name="tags"');
    expect(html).toContain('name="queue"');
  });

  it('keeps the args/kwargs boxes when the workers describe no signature', () => {
    for (const f of [form(), form({ signature: null, doc: null })]) {
      const html = pageFormHtml(f, true).text;
      expect(parameterInputs(html)).toEqual([]);
      expect(html).toContain('name="args"');
      expect(html).toContain('name="kwargs"');
      expect(html).not.toContain('data-signature');
    }
  });

  it('marks a task without parameters as described, with no fields', () => {
    const html = pageFormHtml(form({ signature: { text: '()', parameters: [] } }), true).text;
    expect(html).toContain('data-signature');
    expect(parameterInputs(html)).toEqual([]);
    expect(html).not.toContain('name="args"');
  });

  it('accepts only well-formed signatures in res.locals.form', () => {
    expect(isPageForm(form({ signature }))).toBe(true);
    expect(isPageForm(form({ signature: null, doc: null }))).toBe(true);
    expect(isPageForm({ ...form(), signature: { text: '()', parameters: [{ kind: 'x' }] } })).toBe(false);
    expect(isPageForm({ ...form(), signature: { parameters: [] } })).toBe(false);
    expect(isPageForm({ ...form(), doc: 5 })).toBe(false);
  });
});
