/** The view as curl, Python and export paths: quoting that survives hostile names and values. */
import { describe, expect, it } from 'vitest';
import { curlCommand, exportPath, pandasSnippet, pythonLiteral, pythonSnippet } from '../../../src/explorer/snippets.js';

const view = {
  area: 'data_store' as const,
  db: 'lab',
  col: "it's",
  filter: { name: "O'Brien", ok: true, none: null },
  columns: ['a', 'b\\.c'],
};

describe('snippets', () => {
  it('writes JSON as Python literals', () => {
    expect(pythonLiteral({ a: [true, false, null, 1.5, 'x"y'] })).toBe('{"a": [True, False, None, 1.5, "x\\"y"]}');
  });

  it('quotes the curl URL for a POSIX shell and encodes the query', () => {
    const command = curlCommand(view, 'https://host');
    expect(command).toContain("'https://host/api/data_store/data/lab/it'\\''s/?query=");
    expect(command).toContain('format=ndjson');
  });

  it('names the collection and the query for the client', () => {
    expect(pythonSnippet({ ...view, sort: { field: 'when', direction: -1 } })).toContain(
      'records = col.find(filter={"name": "O\'Brien", "ok": True, "none": None}, sort=[("when", -1)])',
    );
  });

  it('gives CSV the chosen columns as fields', () => {
    const path = new URL(exportPath(view, 'csv'), 'http://x');
    expect(path.searchParams.get('fields')).toBe('a,b\\.c');
    expect(JSON.parse(path.searchParams.get('query') as string)).toEqual({ filter: view.filter });
  });

  it('tells pandas which CSV columns are text and which dates, among those the CSV has', () => {
    const snippet = pandasSnippet({ ...view, columns: [], types: { text: ['code', 'site.name'], dates: ['when'] } });
    expect(snippet).toContain('df = pd.read_csv(url, dtype={"code": str, "site.name": str})');
    expect(snippet).toContain('for column in ["when"]:');
    expect(pandasSnippet({ ...view, types: { text: ['code', 'a'], dates: ['when'] } })).toContain('dtype={"a": str})');
    expect(pandasSnippet({ ...view, types: { text: [], dates: [] } })).toContain('df = pd.read_csv(url)');
  });
});
