/**
 * The view's query as something to run elsewhere: a curl command against the API, Python with
 * the `cybercom` client, `pandas.read_csv` of a signed CSV link, and the CSV and NDJSON download
 * paths. All of them read the same records the view shows, with the reader's own credentials.
 */
import type { AreaName } from '../auth/permissions.js';
import { urls } from '../http/urls.js';

export interface ViewQuery {
  area: AreaName;
  db: string;
  col: string;
  /** The filter as Extended JSON. */
  filter: Record<string, unknown>;
  sort?: { field: string; direction: 1 | -1 };
  /** Chosen columns (CSV `fields`, named as the table names them). */
  columns: readonly string[];
  /** Columns a sample of the records holds only text, or only dates, in (for the CSV reader's types). */
  types?: { text: readonly string[]; dates: readonly string[] };
}

const areaPath = (q: ViewQuery): string => urls.records(q.area, q.db, q.col);

function queryParam(q: ViewQuery): Record<string, unknown> | undefined {
  const query: Record<string, unknown> = {};
  if (Object.keys(q.filter).length > 0) query.filter = q.filter;
  if (q.sort !== undefined) query.sort = { [q.sort.field]: q.sort.direction };
  return Object.keys(query).length === 0 ? undefined : query;
}

/** The API path of the view's records in a format (`csv` takes the chosen columns as `fields`). */
export function exportPath(q: ViewQuery, format: 'json' | 'csv' | 'ndjson'): string {
  const params = new URLSearchParams();
  const query = queryParam(q);
  if (query !== undefined) params.set('query', JSON.stringify(query));
  if (format === 'csv' && q.columns.length > 0) params.set('fields', q.columns.join(','));
  params.set('format', format);
  return `${areaPath(q)}?${params.toString()}`;
}

/** A word for a POSIX shell, in single quotes. */
const shellQuote = (text: string): string => `'${text.replace(/'/g, `'\\''`)}'`;

export function curlCommand(q: ViewQuery, baseUrl: string): string {
  return `curl -H "Authorization: Token $CYBERCOM_TOKEN" \\\n  ${shellQuote(baseUrl + exportPath(q, 'ndjson'))}`;
}

/** A JSON value as a Python literal (JSON strings are valid Python strings). */
export function pythonLiteral(value: unknown, indent = ''): string {
  if (value === null || value === undefined) return 'None';
  if (value === true) return 'True';
  if (value === false) return 'False';
  if (typeof value === 'number' || typeof value === 'string') return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map((item) => pythonLiteral(item, indent)).join(', ')}]`;
  const entries = Object.entries(value as Record<string, unknown>);
  if (entries.length === 0) return '{}';
  return `{${entries.map(([key, item]) => `${JSON.stringify(key)}: ${pythonLiteral(item, indent)}`).join(', ')}}`;
}

function pythonArguments(q: ViewQuery, withFields: boolean): string {
  const args: string[] = [];
  if (Object.keys(q.filter).length > 0) args.push(`filter=${pythonLiteral(q.filter)}`);
  if (q.sort !== undefined) args.push(`sort=[(${JSON.stringify(q.sort.field)}, ${q.sort.direction})]`);
  if (withFields && q.columns.length > 0) args.push(`fields=${pythonLiteral(q.columns)}`);
  return args.join(', ');
}

function collectionLine(q: ViewQuery): string {
  return `col = client.${q.area}[${JSON.stringify(q.db)}][${JSON.stringify(q.col)}]`;
}

export function pythonSnippet(q: ViewQuery): string {
  return [
    'from cybercom import Client',
    '',
    'client = Client()  # CYBERCOM_URL, CYBERCOM_TOKEN',
    collectionLine(q),
    `records = col.find(${pythonArguments(q, false)})`,
    '# Nested objects as dotted columns (site.name), as in the table and the CSV.',
    'df = records.to_dataframe(flatten=True)',
  ].join('\n');
}

/** Of the columns named, those the CSV has (all of them when no columns are chosen). */
function inCsv(q: ViewQuery, columns: readonly string[]): string[] {
  return q.columns.length === 0 ? [...columns] : columns.filter((column) => q.columns.includes(column));
}

export function pandasSnippet(q: ViewQuery): string {
  const args = pythonArguments(q, true);
  const text = inCsv(q, q.types?.text ?? []);
  const dates = inCsv(q, q.types?.dates ?? []);
  // Text stays text ("00429" is no number 429); dates become datetimes: the frame the client's to_dataframe(flatten=True) gives.
  const readArgs = text.length === 0 ? '' : `, dtype={${text.map((column) => `${JSON.stringify(column)}: str`).join(', ')}}`;
  const dateLines =
    dates.length === 0
      ? []
      : [`for column in ${pythonLiteral(dates)}:`, '    if column in df:', '        df[column] = pd.to_datetime(df[column], utc=True)'];
  return [
    'import pandas as pd',
    'from cybercom import Client',
    '',
    'client = Client()  # CYBERCOM_URL, CYBERCOM_TOKEN',
    collectionLine(q),
    '# A signed link: anyone holding it may read this CSV, without credentials, for one hour.',
    `url = col.export_url("csv"${args === '' ? '' : `, ${args}`}, expires_in=3600)`,
    `df = pd.read_csv(url${readArgs})`,
    ...dateLines,
  ].join('\n');
}
