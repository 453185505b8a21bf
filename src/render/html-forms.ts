/**
 * The forms of the browsable page: under a collection (insert records), a record (replace,
 * merge, delete), the database and collection lists (create or delete one), a collection's
 * indexes (create one, drop one by name), a task's run page (submit it with args/kwargs/tags) and
 * the schedules list (create a schedule from its JSON).
 *
 * The forms hold no data from the database, only names from the URL and, on a task's run page,
 * the task's doc and parameters as its workers describe them (escaped like everything else);
 * each is rendered
 * `hidden`: the page script (browser/browsable.ts, served under /api/static/) shows them and
 * submits them as JSON with the CSRF header via fetch. Without the script the page stays a
 * readable, read-only JSON view, and a plain form POST can never reach the API by accident.
 */
import { html, type Html } from './html-template.js';
import { browsableScriptPath } from './html-script.js';
import { recordsPath, urls } from '../http/urls.js';

export const PAGE_FORM_KINDS = ['collection', 'record', 'databases', 'collections', 'task-run', 'indexes', 'schedule'] as const;
export type PageFormKind = (typeof PAGE_FORM_KINDS)[number];

/** One parameter of a task's signature (Python's kinds, as the task list has them). */
export interface FormParameter {
  name: string;
  kind: string;
  /** JSON, or with `defaultIsRepr` the text of a default JSON cannot carry. */
  default?: unknown;
  defaultIsRepr?: boolean;
  annotation?: string;
}

/** What a route tells the page about the form to show (set as `res.locals.form`). */
export interface PageForm {
  kind: PageFormKind;
  /** Where the form sends to (the page's own URL for every kind so far): a site path or an absolute URL of this site. */
  postUrl: string;
  /** task-run: the task's name, repeated in the body as `function`. */
  task?: string;
  /** task-run: the task's docstring, shown above the fields. */
  doc?: string | null;
  /** task-run: one field per parameter instead of the args/kwargs boxes, when the workers describe it. */
  signature?: { text: string; parameters: readonly FormParameter[] } | null;
}

/** The shape check used before trusting `res.locals.form` (set by code, but loosely typed). */
export function isPageForm(value: unknown): value is PageForm {
  if (typeof value !== 'object' || value === null) return false;
  const form = value as Record<string, unknown>;
  return (
    typeof form.kind === 'string' &&
    (PAGE_FORM_KINDS as readonly string[]).includes(form.kind) &&
    typeof form.postUrl === 'string' &&
    (form.task === undefined || typeof form.task === 'string') &&
    (form.doc === undefined || form.doc === null || typeof form.doc === 'string') &&
    (form.signature === undefined || form.signature === null || isFormSignature(form.signature))
  );
}

function isFormSignature(value: unknown): boolean {
  if (typeof value !== 'object' || value === null) return false;
  const { text, parameters } = value as Record<string, unknown>;
  return (
    typeof text === 'string' &&
    Array.isArray(parameters) &&
    parameters.every(
      (p: unknown) =>
        typeof p === 'object' &&
        p !== null &&
        typeof (p as FormParameter).name === 'string' &&
        typeof (p as FormParameter).kind === 'string',
    )
  );
}

/** Routes call this to ask for a form on their browsable page. */
export function setPageForm(res: { locals: Record<string, unknown> }, form: PageForm): void {
  res.locals.form = form;
}

export const FORM_STYLE = `
.api-form{margin:10px 0 30px;padding:15px;border:1px solid #ddd;border-radius:4px;background:#fcfcfc}
.api-form h2{font-size:18px;font-weight:400;margin:0 0 10px}
.api-form label{display:block;margin:8px 0 4px;font-weight:600}
.api-form textarea,.api-form input[type=text]{width:100%;padding:6px;border:1px solid #bbb;border-radius:3px;font-family:ui-monospace,Menlo,Consolas,monospace;font-size:13px}
.api-form textarea{min-height:8em}
.api-form .hint{color:#666;font-size:12px;margin:4px 0 0}
.api-form .doc{white-space:pre-wrap;margin:0 0 10px}
.api-form .signature{font-family:ui-monospace,Menlo,Consolas,monospace;font-size:13px;margin:0 0 10px}
.api-form .buttons{margin-top:10px}
.api-form button{padding:6px 14px;margin-right:6px;border:1px solid #2c6dac;border-radius:3px;background:#2c6dac;color:#fff;cursor:pointer}
.api-form button.danger{background:#fff;color:#a30000;border-color:#a30000}
.api-form .result{margin-top:12px}
.api-form .result pre{margin:4px 0 0}
.api-form .result .status{font-weight:600}
.api-form .result .status.failed{color:#a30000}
.paging{margin:0 0 10px}
.paging a,.paging span{display:inline-block;padding:4px 10px;margin-right:4px;border:1px solid #ccc;border-radius:3px;color:#333;text-decoration:none}
.paging span.disabled{color:#aaa}
.paging .position{border:0}
`;

const textarea = (name: string, label: string, placeholder: string, hint: string): Html =>
  html`<label for="api-form-${name}">${label}</label><textarea id="api-form-${name}" name="${name}" spellcheck="false" placeholder="${placeholder}"></textarea><p class="hint">${hint}</p>`;

const textInput = (name: string, label: string, hint: string): Html =>
  html`<label for="api-form-${name}">${label}</label><input type="text" id="api-form-${name}" name="${name}" autocomplete="off" spellcheck="false"><p class="hint">${hint}</p>`;

const PARAMETER_PREFIX: Record<string, string> = { var_positional: '*', var_keyword: '**' };

const PARAMETER_HINT: Record<string, string> = {
  positional_only: 'Positional argument, as JSON (e.g. 2, "text", [1, 2]).',
  positional_or_keyword: 'As JSON (e.g. 2, "text", [1, 2]).',
  keyword_only: 'Keyword argument, as JSON (e.g. 2, "text", [1, 2]).',
  var_positional: 'Any further positional arguments: a JSON array.',
  var_keyword: 'Any further keyword arguments: a JSON object.',
};

/**
 * One text field per parameter, holding JSON; a JSON default is pre-filled, a default only its
 * text can show is a placeholder (empty = the task's own default). The script turns the fields
 * into args and kwargs (browser/browsable.ts).
 */
function parameterField(p: FormParameter, index: number): Html {
  const id = `api-form-param-${index}`;
  const variadic = p.kind === 'var_positional' || p.kind === 'var_keyword';
  const required = p.default === undefined && !variadic;
  const label = `${PARAMETER_PREFIX[p.kind] ?? ''}${p.name}${p.annotation === undefined ? '' : `: ${p.annotation}`}`;
  const prefilled = p.default !== undefined && p.defaultIsRepr !== true ? JSON.stringify(p.default) : '';
  const placeholder =
    p.defaultIsRepr === true ? `default: ${String(p.default)}` : variadic ? (p.kind === 'var_positional' ? '[]' : '{}') : '';
  const note = required
    ? ' Required.'
    : p.defaultIsRepr === true
      ? " Leave empty for the task's default."
      : p.default !== undefined
        ? " Empty: the task's default."
        : '';
  return html`<label for="${id}">${label}</label><input type="text" id="${id}" name="param-${index}" autocomplete="off" spellcheck="false" data-param-name="${p.name}" data-param-kind="${p.kind}"${required && html` data-param-required`} value="${prefilled}" placeholder="${placeholder}"><p class="hint">${(PARAMETER_HINT[p.kind] ?? 'As JSON.') + note}</p>`;
}

function taskRunFields(form: PageForm): Html {
  const doc = form.doc ? html`<p class="doc">${form.doc}</p>` : undefined;
  const signature = form.signature ?? null;
  const call =
    signature === null
      ? html`${textarea('args', 'args (JSON array)', '[]', 'Positional arguments, e.g. [1, "two"].')}${textarea('kwargs', 'kwargs (JSON object)', '{}', 'Keyword arguments, e.g. {"name": "value"}.')}`
      : html`<p class="signature">${`${form.task ?? ''}${signature.text}`}</p>${signature.parameters.map(parameterField)}`;
  return html`${doc}${call}${textInput('tags', 'tags', 'Comma-separated labels for finding the run in your task history.')}${textInput('queue', 'queue (optional)', "Leave empty for the task's default queue.")}`;
}

/** A submit button; the script reads data-method and data-action to build the request. */
const button = (method: string, label: string, options: { action?: string; danger?: boolean } = {}): Html =>
  html`<button type="submit" data-method="${method}"${options.action && html` data-action="${options.action}"`}${options.danger && html` class="danger"`}>${label}</button>`;

function fields(form: PageForm): { heading: string; body: Html; buttons: Html } {
  switch (form.kind) {
    case 'collection':
      return {
        heading: 'Add records',
        body: textarea(
          'content',
          'Record (JSON object) or records (JSON array)',
          '{"name": "value"}',
          'MongoDB Extended JSON is accepted, e.g. {"$date": "2024-01-01T00:00:00Z"}.',
        ),
        buttons: button('POST', 'POST'),
      };
    case 'record':
      return {
        heading: 'Change this record',
        body: textarea(
          'content',
          'Record (JSON object)',
          '{"name": "value"}',
          'PUT replaces the record, PATCH sets only the given fields.',
        ),
        buttons: html`${button('PUT', 'PUT')}${button('PATCH', 'PATCH')}${button('DELETE', 'DELETE', { danger: true })}`,
      };
    case 'databases':
      return {
        heading: 'Create or delete a database',
        body: textInput('database', 'Database name', 'Deleting a database deletes every collection and record in it.'),
        buttons: html`${button('POST', 'Create')}${button('POST', 'Delete', { action: 'delete', danger: true })}`,
      };
    case 'collections':
      return {
        heading: 'Create or delete a collection',
        body: textInput('collection', 'Collection name', 'Deleting a collection deletes every record in it.'),
        buttons: html`${button('POST', 'Create')}${button('POST', 'Delete', { action: 'delete', danger: true })}`,
      };
    case 'indexes':
      return {
        heading: 'Create or drop an index',
        body: html`${textarea(
          'content',
          'Index (JSON object)',
          '{"keys": {"field": 1}}',
          'Keys 1, -1, "2dsphere", "text" or "hashed"; a list of pairs keeps their order. Optional: name, unique, sparse, expireAfterSeconds, partialFilterExpression.',
        )}${textInput('index', 'Index name (to drop)', 'Dropping an index does not touch the records.')}`,
        buttons: html`${button('POST', 'Create')}${button('DELETE', 'Drop', { danger: true })}`,
      };
    case 'schedule':
      return {
        heading: 'Create a schedule',
        body: textarea(
          'content',
          'Schedule (JSON object)',
          '{"name": "nightly", "task": "tasks.harvest", "kwargs": {}, "crontab": "0 2 * * *", "timezone": "America/Chicago"}',
          'name, task, args, kwargs, queue, and one timing: crontab (+ timezone), interval {"every": 15, "period": "minutes"}, solar {"event": "sunrise", "latitude": 46.8, "longitude": -89.5} or clocked (an ISO 8601 time); options overlap, catch_up_window, jitter, start_time, end_time, max_runs, expires, paused, note.',
        ),
        buttons: button('POST', 'Create'),
      };
    case 'task-run':
      return {
        heading: `Run ${form.task ?? 'this task'}`,
        body: taskRunFields(form),
        buttons: button('POST', 'Run'),
      };
  }
}

/**
 * The path (and query) the form may send to: a site path as is (never `//host`), an absolute
 * http(s) URL reduced to its path (routes build their links absolute, and the page is always
 * served by this site); anything else gives null and no form.
 */
function formTarget(postUrl: string): string | null {
  if (/^\/(?![/\\])\S*$/.test(postUrl)) return postUrl;
  try {
    const url = new URL(postUrl);
    return url.protocol === 'http:' || url.protocol === 'https:' ? url.pathname + url.search : null;
  } catch {
    return null;
  }
}

/**
 * The form block, or nothing when `form` is absent or its URL is unusable. Anonymous visitors see the
 * form too (reads may be open), with a note that changes need a login.
 */
export function pageFormHtml(form: PageForm | undefined, loggedIn: boolean, nonce?: string): Html {
  const target = form === undefined ? null : formTarget(form.postUrl);
  if (form === undefined || target === null) return html``;
  const { heading, body, buttons } = fields(form);
  // A collection's indexes have a page of their own, next to its records.
  const indexes = form.kind === 'collection' ? recordsPath(target) : null;
  const indexesLink =
    indexes !== null && html`<p class="hint"><a href="${urls.indexes(indexes.area, indexes.rest)}">Indexes of this collection</a></p>`;
  const task = form.task !== undefined && html` data-task="${form.task}"`;
  const signature = form.kind === 'task-run' && form.signature && html` data-signature`;
  const note = !loggedIn && html`<p class="hint">Log in to send changes from this page.</p>`;
  return html`<form class="api-form" data-browsable="${form.kind}" data-url="${target}"${task}${signature} hidden><h2>${heading}</h2>${note}${body}<div class="buttons">${buttons}</div>${indexesLink}<div class="result" aria-live="polite" hidden><span class="status"></span><pre class="body"></pre><p class="link"></p></div></form>
<noscript><p class="hint">The forms of this page need JavaScript; the JSON above is the complete response.</p></noscript>
<script src="${browsableScriptPath()}"${nonce && html` nonce="${nonce}"`} defer></script>
`;
}
