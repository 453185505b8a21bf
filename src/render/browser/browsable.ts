/**
 * The browsable page's only script, served by the API itself under /api/static/ (so the
 * Content-Security-Policy needs no inline script and nothing comes from the internet).
 *
 * It shows the hidden forms (html-forms.ts), and on submit sends JSON with fetch:
 * `Content-Type: application/json`, `Accept: application/json` and `X-CSRFToken` taken from the
 * `csrftoken` cookie (session requests need it, see src/auth/csrf.ts). The answer is shown with
 * textContent only, never as HTML, and a link is offered to what was created when the server
 * returns a same-origin URL for it.
 */

interface Link {
  href: string;
  text: string;
}

/**
 * A record is sent as the text typed, once it is known to be JSON: parsed and written again,
 * 3.0 would become 3, which the API stores as an integer rather than a double.
 */
class RecordText {
  constructor(readonly text: string) {}
}

type RequestBody = RecordText | Record<string, unknown> | unknown[] | undefined;

function cookie(name: string): string {
  const parts = document.cookie ? document.cookie.split('; ') : [];
  for (const part of parts) {
    const eq = part.indexOf('=');
    if (part.slice(0, eq) === name) return decodeURIComponent(part.slice(eq + 1));
  }
  return '';
}

function field(form: HTMLFormElement, name: string): string {
  const element = form.elements.namedItem(name) as { value?: unknown } | null;
  return element && typeof element.value === 'string' ? element.value : '';
}

const attribute = (element: Element, name: string): string => element.getAttribute(name) ?? '';

function parseJson(text: string, what: string, fallback?: unknown): unknown {
  if (text.trim() === '') {
    if (fallback !== undefined) return fallback;
    throw new Error(`${what} is empty.`);
  }
  let problem: string;
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    problem = (error as Error).message;
  }
  // Thrown for the person filling the form, with the parser's words (not as a cause, which ES2017 has not).
  throw new Error(`${what} is not valid JSON: ${problem}`);
}

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** The args and kwargs boxes of a task without a known signature. */
function rawCall(form: HTMLFormElement): { args: unknown[]; kwargs: Record<string, unknown> } {
  const args = parseJson(field(form, 'args'), 'args', []);
  if (!Array.isArray(args)) throw new Error('args must be a JSON array.');
  const kwargs = parseJson(field(form, 'kwargs'), 'kwargs', {});
  if (!isObject(kwargs)) throw new Error('kwargs must be a JSON object.');
  return { args, kwargs };
}

/**
 * One field per parameter (html-forms.ts), in the signature's order. Positional parameters go
 * to args while every earlier one is given; once one is left empty (the task's default),
 * later ones that may be passed by name go to kwargs, and positional-only ones cannot be sent.
 */
function signatureCall(form: HTMLFormElement): { args: unknown[]; kwargs: Record<string, unknown> } {
  let args: unknown[] = [];
  const kwargs: Record<string, unknown> = {};
  let skipped: string | null = null;
  for (const input of Array.from(form.querySelectorAll<HTMLInputElement>('[data-param-kind]'))) {
    const name = attribute(input, 'data-param-name');
    const kind = attribute(input, 'data-param-kind');
    if (input.value.trim() === '') {
      if (input.hasAttribute('data-param-required')) throw new Error(`${name} is required.`);
      if (kind === 'positional_only' || kind === 'positional_or_keyword') skipped = skipped ?? name;
      continue;
    }
    const value = parseJson(input.value, name);
    if (kind === 'positional_or_keyword' && skipped !== null) {
      kwargs[name] = value;
    } else if (kind === 'positional_only' || kind === 'positional_or_keyword' || kind === 'var_positional') {
      if (skipped !== null) throw new Error(`${name} cannot be sent while ${skipped} is left empty.`);
      if (kind !== 'var_positional') args.push(value);
      else if (Array.isArray(value)) args = args.concat(value);
      else throw new Error(`${name} must be a JSON array.`);
    } else if (kind === 'keyword_only') {
      kwargs[name] = value;
    } else if (kind === 'var_keyword') {
      if (!isObject(value)) throw new Error(`${name} must be a JSON object.`);
      for (const key of Object.keys(value)) kwargs[key] = value[key];
    }
  }
  return { args, kwargs };
}

function recordText(form: HTMLFormElement): RecordText {
  const text = field(form, 'content');
  parseJson(text, 'The record');
  return new RecordText(text);
}

function requestBody(form: HTMLFormElement, kind: string, button: Element): RequestBody {
  if (kind === 'collection') return recordText(form);
  if (kind === 'record') {
    return button.getAttribute('data-method') === 'DELETE' ? undefined : recordText(form);
  }
  if (kind === 'databases' || kind === 'collections') {
    const key = kind === 'databases' ? 'database' : 'collection';
    const name = field(form, key).trim();
    if (name === '') throw new Error(`Enter a ${key} name.`);
    const body: Record<string, unknown> = { [key]: name };
    const action = button.getAttribute('data-action');
    if (action) body.action = action;
    return body;
  }
  if (kind === 'indexes') {
    if (button.getAttribute('data-method') === 'DELETE') {
      if (field(form, 'index').trim() === '') throw new Error('Enter the name of the index to drop.');
      return undefined;
    }
    return parseJson(field(form, 'content'), 'The index') as RequestBody;
  }
  if (kind === 'schedule') return parseJson(field(form, 'content'), 'The schedule') as RequestBody;
  if (kind === 'task-run') {
    const { args, kwargs } = form.hasAttribute('data-signature') ? signatureCall(form) : rawCall(form);
    const tags = field(form, 'tags')
      .split(',')
      .map((t) => t.trim())
      .filter((t) => t.length > 0);
    const run: Record<string, unknown> = { function: form.getAttribute('data-task'), args, kwargs, tags };
    const queue = field(form, 'queue').trim();
    if (queue !== '') run.queue = queue;
    return run;
  }
  throw new Error('Unknown form.');
}

function confirmDanger(form: HTMLFormElement, kind: string, button: Element): boolean {
  const method = button.getAttribute('data-method');
  if (kind === 'record' && method === 'DELETE') return window.confirm('Delete this record?');
  if (kind === 'indexes' && method === 'DELETE') return window.confirm(`Drop the index "${field(form, 'index').trim()}"?`);
  if (button.getAttribute('data-action') === 'delete') {
    const key = kind === 'databases' ? 'database' : 'collection';
    return window.confirm(`Delete the ${key} "${field(form, key).trim()}" and everything in it?`);
  }
  return true;
}

/** A same-origin URL as an absolute string, or null. */
function sameOrigin(url: string): string | null {
  try {
    const resolved = new URL(url, window.location.href);
    return resolved.origin === window.location.origin ? resolved.href : null;
  } catch {
    return null;
  }
}

function resultLink(form: HTMLFormElement, kind: string, status: number, data: unknown): Link | null {
  if (status >= 300 || !isObject(data)) return null;
  if (kind === 'collection' && data._id !== undefined) {
    return { href: attribute(form, 'data-url') + encodeURIComponent(String(data._id)) + '/', text: 'Open the new record' };
  }
  if (kind === 'collection' && Array.isArray(data.inserted_ids)) return { href: window.location.href, text: 'Reload this page' };
  if (kind === 'record' && data.deleted !== undefined) {
    return { href: attribute(form, 'data-url').replace(/[^/]+\/$/, ''), text: 'Back to the collection' };
  }
  if (kind === 'record') return { href: window.location.href, text: 'Reload this record' };
  if (typeof data.url === 'string') return { href: data.url, text: 'Open it' };
  if (typeof data.result_url === 'string') return { href: data.result_url, text: 'Follow this run' };
  if (data.deleted !== undefined) return { href: window.location.href, text: 'Reload this page' };
  return null;
}

function show(form: HTMLFormElement, ok: boolean, heading: string, text: string, link: Link | null): void {
  const box = form.querySelector<HTMLElement>('.result');
  const status = box?.querySelector('.status');
  const body = box?.querySelector('.body');
  const paragraph = box?.querySelector('.link');
  if (!box || !status || !body || !paragraph) return;
  status.textContent = heading;
  status.className = ok ? 'status' : 'status failed';
  body.textContent = text;
  paragraph.textContent = '';
  const href = link === null ? null : sameOrigin(link.href);
  if (link !== null && href !== null) {
    const anchor = document.createElement('a');
    anchor.href = href;
    anchor.textContent = link.text;
    paragraph.appendChild(anchor);
  }
  box.hidden = false;
}

/** Where the request goes: the form's URL, or for dropping an index that index's own URL. */
function requestUrl(form: HTMLFormElement, kind: string, button: Element): string {
  const url = attribute(form, 'data-url');
  if (kind === 'indexes' && button.getAttribute('data-method') === 'DELETE')
    return `${url}${encodeURIComponent(field(form, 'index').trim())}/`;
  return url;
}

function submit(form: HTMLFormElement, button: Element): void {
  const kind = attribute(form, 'data-browsable');
  let body: RequestBody;
  try {
    body = requestBody(form, kind, button);
  } catch (error) {
    show(form, false, 'Not sent', (error as Error).message, null);
    return;
  }
  if (!confirmDanger(form, kind, button)) return;
  const headers: Record<string, string> = { Accept: 'application/json', 'X-CSRFToken': cookie('csrftoken') };
  const init: RequestInit = { method: button.getAttribute('data-method') ?? undefined, headers, credentials: 'same-origin' };
  if (body !== undefined) {
    headers['Content-Type'] = 'application/json';
    init.body = body instanceof RecordText ? body.text : JSON.stringify(body);
  }
  fetch(requestUrl(form, kind, button), init)
    .then((response) =>
      response.text().then((text) => {
        let data: unknown = null;
        let pretty = text;
        try {
          data = JSON.parse(text) as unknown;
          pretty = JSON.stringify(data, null, 4);
        } catch {
          // Not JSON: shown as the text it is, with no link.
        }
        const heading = `HTTP ${response.status} ${response.statusText}`;
        show(form, response.ok, heading, pretty, resultLink(form, kind, response.status, data));
      }),
    )
    .catch((error: unknown) => {
      const message = error instanceof Error && error.message ? error.message : String(error);
      show(form, false, 'Request failed', message, null);
    });
}

/** The record form starts from the record shown above, ready to edit. */
function prefill(form: HTMLFormElement): void {
  const content = document.querySelector('pre.content');
  const target = form.elements.namedItem('content') as HTMLTextAreaElement | null;
  if (content === null || target === null) return;
  // The page's text as it is (already indented): parsed and written again, 3.0 would become 3.
  const text = (content.textContent ?? '').trim();
  try {
    JSON.parse(text);
    target.value = text;
  } catch {
    target.value = '';
  }
}

for (const form of Array.from(document.querySelectorAll<HTMLFormElement>('form[data-browsable]'))) {
  let lastButton: HTMLButtonElement | null = null;
  for (const button of Array.from(form.querySelectorAll<HTMLButtonElement>('button[type=submit]'))) {
    button.addEventListener('click', () => {
      lastButton = button;
    });
  }
  if (form.getAttribute('data-browsable') === 'record') prefill(form);
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const button = event.submitter ?? lastButton ?? form.querySelector('button[type=submit]');
    if (button !== null) submit(form, button);
  });
  form.hidden = false;
}
