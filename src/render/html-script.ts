/**
 * The browsable page's only script, served by the API itself at /api/static/browsable.js (so
 * the Content-Security-Policy needs no inline script and nothing comes from the internet).
 *
 * It shows the hidden forms (html-forms.ts), and on submit sends JSON with fetch:
 * `Content-Type: application/json`, `Accept: application/json` and `X-CSRFToken` taken from the
 * `csrftoken` cookie (session requests need it, see src/auth/csrf.ts). The answer is shown with
 * textContent only, never as HTML, and a link is offered to what was created when the server
 * returns a same-origin URL for it.
 *
 * Plain ES2017 in a string: it runs in the browser as is, without a build step.
 */
import type { Request, Response } from 'express';
import { createHash } from 'node:crypto';
import { urls } from '../http/urls.js';

export const BROWSABLE_SCRIPT_PATH = urls.browsableScript();

export const BROWSABLE_SCRIPT = String.raw`(function () {
  'use strict';

  function cookie(name) {
    var parts = document.cookie ? document.cookie.split('; ') : [];
    for (var i = 0; i < parts.length; i++) {
      var eq = parts[i].indexOf('=');
      if (parts[i].slice(0, eq) === name) return decodeURIComponent(parts[i].slice(eq + 1));
    }
    return '';
  }

  function field(form, name) {
    var element = form.elements.namedItem(name);
    return element && typeof element.value === 'string' ? element.value : '';
  }

  function parseJson(text, what, fallback) {
    if (text.trim() === '') {
      if (fallback !== undefined) return fallback;
      throw new Error(what + ' is empty.');
    }
    try {
      return JSON.parse(text);
    } catch (error) {
      throw new Error(what + ' is not valid JSON: ' + error.message);
    }
  }

  function isObject(value) {
    return value !== null && typeof value === 'object' && !Array.isArray(value);
  }

  /** The args and kwargs boxes of a task without a known signature. */
  function rawCall(form) {
    var args = parseJson(field(form, 'args'), 'args', []);
    if (!Array.isArray(args)) throw new Error('args must be a JSON array.');
    var kwargs = parseJson(field(form, 'kwargs'), 'kwargs', {});
    if (!isObject(kwargs)) throw new Error('kwargs must be a JSON object.');
    return { args: args, kwargs: kwargs };
  }

  /**
   * One field per parameter (html-forms.ts), in the signature's order. Positional parameters go
   * to args while every earlier one is given; once one is left empty (the task's default),
   * later ones that may be passed by name go to kwargs, and positional-only ones cannot be sent.
   */
  function signatureCall(form) {
    var args = [];
    var kwargs = {};
    var skipped = null;
    Array.prototype.forEach.call(form.querySelectorAll('[data-param-kind]'), function (input) {
      var name = input.getAttribute('data-param-name');
      var kind = input.getAttribute('data-param-kind');
      if (input.value.trim() === '') {
        if (input.hasAttribute('data-param-required')) throw new Error(name + ' is required.');
        if (kind === 'positional_only' || kind === 'positional_or_keyword') skipped = skipped || name;
        return;
      }
      var value = parseJson(input.value, name);
      if (kind === 'positional_or_keyword' && skipped !== null) {
        kwargs[name] = value;
      } else if (kind === 'positional_only' || kind === 'positional_or_keyword' || kind === 'var_positional') {
        if (skipped !== null) throw new Error(name + ' cannot be sent while ' + skipped + ' is left empty.');
        if (kind !== 'var_positional') args.push(value);
        else if (Array.isArray(value)) args = args.concat(value);
        else throw new Error(name + ' must be a JSON array.');
      } else if (kind === 'keyword_only') {
        kwargs[name] = value;
      } else if (kind === 'var_keyword') {
        if (!isObject(value)) throw new Error(name + ' must be a JSON object.');
        Object.keys(value).forEach(function (key) { kwargs[key] = value[key]; });
      }
    });
    return { args: args, kwargs: kwargs };
  }

  // A record is sent as the text typed, once it is known to be JSON: parsed and written again,
  // 3.0 would become 3, which the API stores as an integer rather than a double.
  function RecordText(text) {
    this.text = text;
  }

  function recordText(form) {
    var text = field(form, 'content');
    parseJson(text, 'The record');
    return new RecordText(text);
  }

  function requestBody(form, kind, button) {
    if (kind === 'collection') return recordText(form);
    if (kind === 'record') {
      return button.getAttribute('data-method') === 'DELETE' ? undefined : recordText(form);
    }
    if (kind === 'databases' || kind === 'collections') {
      var key = kind === 'databases' ? 'database' : 'collection';
      var name = field(form, key).trim();
      if (name === '') throw new Error('Enter a ' + key + ' name.');
      var body = {};
      body[key] = name;
      var action = button.getAttribute('data-action');
      if (action) body.action = action;
      return body;
    }
    if (kind === 'indexes') {
      if (button.getAttribute('data-method') === 'DELETE') {
        if (field(form, 'index').trim() === '') throw new Error('Enter the name of the index to drop.');
        return undefined;
      }
      return parseJson(field(form, 'content'), 'The index');
    }
    if (kind === 'schedule') return parseJson(field(form, 'content'), 'The schedule');
    if (kind === 'task-run') {
      var call = form.hasAttribute('data-signature') ? signatureCall(form) : rawCall(form);
      var args = call.args;
      var kwargs = call.kwargs;
      var tags = field(form, 'tags').split(',').map(function (t) { return t.trim(); }).filter(function (t) { return t.length > 0; });
      var run = { 'function': form.getAttribute('data-task'), args: args, kwargs: kwargs, tags: tags };
      var queue = field(form, 'queue').trim();
      if (queue !== '') run.queue = queue;
      return run;
    }
    throw new Error('Unknown form.');
  }

  function confirmDanger(form, kind, button) {
    var method = button.getAttribute('data-method');
    if (kind === 'record' && method === 'DELETE') return window.confirm('Delete this record?');
    if (kind === 'indexes' && method === 'DELETE') return window.confirm('Drop the index "' + field(form, 'index').trim() + '"?');
    if (button.getAttribute('data-action') === 'delete') {
      var key = kind === 'databases' ? 'database' : 'collection';
      return window.confirm('Delete the ' + key + ' "' + field(form, key).trim() + '" and everything in it?');
    }
    return true;
  }

  /** A same-origin URL as an absolute string, or null. */
  function sameOrigin(url) {
    try {
      var resolved = new URL(url, window.location.href);
      return resolved.origin === window.location.origin ? resolved.href : null;
    } catch (error) {
      return null;
    }
  }

  function resultLink(form, kind, status, data) {
    if (status >= 300 || data === null || typeof data !== 'object') return null;
    if (kind === 'collection' && data._id !== undefined) {
      return { href: form.getAttribute('data-url') + encodeURIComponent(String(data._id)) + '/', text: 'Open the new record' };
    }
    if (kind === 'collection' && Array.isArray(data.inserted_ids)) return { href: window.location.href, text: 'Reload this page' };
    if (kind === 'record' && data.deleted !== undefined) return { href: form.getAttribute('data-url').replace(/[^/]+\/$/, ''), text: 'Back to the collection' };
    if (kind === 'record') return { href: window.location.href, text: 'Reload this record' };
    if (typeof data.url === 'string') return { href: data.url, text: 'Open it' };
    if (typeof data.result_url === 'string') return { href: data.result_url, text: 'Follow this run' };
    if (data.deleted !== undefined) return { href: window.location.href, text: 'Reload this page' };
    return null;
  }

  function show(form, ok, heading, text, link) {
    var box = form.querySelector('.result');
    var status = box.querySelector('.status');
    status.textContent = heading;
    status.className = ok ? 'status' : 'status failed';
    box.querySelector('.body').textContent = text;
    var paragraph = box.querySelector('.link');
    paragraph.textContent = '';
    var href = link === null ? null : sameOrigin(link.href);
    if (href !== null) {
      var anchor = document.createElement('a');
      anchor.href = href;
      anchor.textContent = link.text;
      paragraph.appendChild(anchor);
    }
    box.hidden = false;
  }

  /** Where the request goes: the form's URL, or for dropping an index that index's own URL. */
  function requestUrl(form, kind, button) {
    var url = form.getAttribute('data-url');
    if (kind === 'indexes' && button.getAttribute('data-method') === 'DELETE') return url + encodeURIComponent(field(form, 'index').trim()) + '/';
    return url;
  }

  function submit(form, button) {
    var kind = form.getAttribute('data-browsable');
    var body;
    try {
      body = requestBody(form, kind, button);
    } catch (error) {
      show(form, false, 'Not sent', error.message, null);
      return;
    }
    if (!confirmDanger(form, kind, button)) return;
    var headers = { 'Accept': 'application/json', 'X-CSRFToken': cookie('csrftoken') };
    var init = { method: button.getAttribute('data-method'), headers: headers, credentials: 'same-origin' };
    if (body !== undefined) {
      headers['Content-Type'] = 'application/json';
      init.body = body instanceof RecordText ? body.text : JSON.stringify(body);
    }
    fetch(requestUrl(form, kind, button), init).then(function (response) {
      return response.text().then(function (text) {
        var data = null;
        var pretty = text;
        try {
          data = JSON.parse(text);
          pretty = JSON.stringify(data, null, 4);
        } catch (error) {
          data = null;
        }
        var heading = 'HTTP ' + response.status + ' ' + response.statusText;
        show(form, response.ok, heading, pretty, resultLink(form, kind, response.status, data));
      });
    }).catch(function (error) {
      show(form, false, 'Request failed', String(error && error.message ? error.message : error), null);
    });
  }

  function prefill(form) {
    // The record form starts from the record shown above, ready to edit.
    var content = document.querySelector('pre.content');
    var target = form.elements.namedItem('content');
    if (content === null || target === null) return;
    // The page's text as it is (already indented): parsed and written again, 3.0 would become 3.
    var text = content.textContent.trim();
    try {
      JSON.parse(text);
      target.value = text;
    } catch (error) {
      target.value = '';
    }
  }

  var forms = document.querySelectorAll('form[data-browsable]');
  Array.prototype.forEach.call(forms, function (form) {
    var lastButton = null;
    Array.prototype.forEach.call(form.querySelectorAll('button[type=submit]'), function (button) {
      button.addEventListener('click', function () { lastButton = button; });
    });
    if (form.getAttribute('data-browsable') === 'record') prefill(form);
    form.addEventListener('submit', function (event) {
      event.preventDefault();
      var button = event.submitter || lastButton || form.querySelector('button[type=submit]');
      submit(form, button);
    });
    form.hidden = false;
  });
})();
`;

const SCRIPT_ETAG = `"${createHash('sha256').update(BROWSABLE_SCRIPT).digest('base64url').slice(0, 27)}"`;

/** GET /api/static/browsable.js: the script, revalidated by ETag so a new version is picked up at once. */
export function browsableScript(req: Request, res: Response): void {
  res.setHeader('Content-Type', 'application/javascript; charset=utf-8');
  res.setHeader('Cache-Control', 'no-cache');
  res.setHeader('ETag', SCRIPT_ETAG);
  if (req.headers['if-none-match'] === SCRIPT_ETAG) {
    res.status(304).end();
    return;
  }
  res.status(200).send(BROWSABLE_SCRIPT);
}
