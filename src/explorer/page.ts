/**
 * The explorer's page shell: navigation and the one inline <style> (carrying the request's CSP
 * nonce), and no inline script: every view works without JavaScript under the service's strict
 * Content-Security-Policy (the chart, the map and the histograms' brush load script files). Everything from the data or the URL is escaped by the views.
 */
import { html, joinHtml, raw, type Html } from '../render/html-template.js';
import { DOCUMENT_START, MANUAL_PATH } from '../render/html.js';
import { urls } from '../http/urls.js';
import { FAVICON_PATH } from './favicon.js';

export interface Shell {
  appTitle: string;
  heading: string;
  username: string | null;
  nonce: string | undefined;
  /** Crumbs from the API root to this view: [text, href | null]. */
  crumbs: [string, string | null][];
  /** The request's path and query, for the login link's way back. */
  here: string;
}

const STYLE = `
*{box-sizing:border-box}
body{margin:0;font-family:system-ui,-apple-system,"Segoe UI",Helvetica,Arial,sans-serif;font-size:14px;color:#222;background:#fff}
a{color:#2c6dac;text-decoration:none}a:hover{text-decoration:underline}
.navbar{display:flex;justify-content:space-between;align-items:center;padding:0 20px;min-height:46px;background:#2c2c2c;border-bottom:4px solid #a30000;color:#ddd}
.navbar a{color:#fff}.navbar .brand{font-size:18px}
.crumbs{margin:12px 20px 0;color:#777}.crumbs a{color:#2c6dac}
main{margin:0 20px 40px;overflow-wrap:anywhere}
h1{font-size:24px;font-weight:400;margin:6px 0 10px;word-break:break-all}
.tabs{display:flex;gap:4px;border-bottom:1px solid #ccc;margin-bottom:12px}
.tabs a{padding:6px 14px;border:1px solid transparent;border-bottom:0;border-radius:4px 4px 0 0;color:#333}
.tabs a.on{border-color:#ccc;background:#fff;margin-bottom:-1px;font-weight:600}
.panel{border:1px solid #ddd;border-radius:4px;padding:8px 10px;margin:0 0 10px;background:#fafafa}
.panel h2{font-size:13px;text-transform:uppercase;letter-spacing:.04em;color:#666;margin:0 0 6px}
form.rows .row{display:flex;gap:6px;margin-bottom:4px;align-items:center}
input[type=text],select,textarea{font:inherit;padding:3px 6px;border:1px solid #bbb;border-radius:3px}
select,input[type=text]{max-width:24em;text-overflow:ellipsis}
textarea{width:100%;font-family:ui-monospace,Menlo,Consolas,monospace;font-size:12px}
button{font:inherit;padding:3px 12px;border:1px solid #2c6dac;background:#2c6dac;color:#fff;border-radius:3px;cursor:pointer}
.summary{margin:8px 0;color:#444}.hint{color:#8a5a00;background:#fff7e0;border:1px solid #f0d890;padding:4px 8px;border-radius:3px;margin:6px 0}
.scroll{overflow-x:auto;border:1px solid #ddd;border-radius:4px}
table.records{border-collapse:collapse;width:max-content;min-width:100%}
table.records th,table.records td{border-bottom:1px solid #eee;padding:4px 8px;text-align:left;vertical-align:top;max-width:28em;overflow:hidden;text-overflow:ellipsis;white-space:nowrap}
table.records th{background:#f3f3f3;position:sticky;top:0;font-weight:600;overflow:visible}
table.records th a.sort{display:inline-block;max-width:26em;overflow:hidden;text-overflow:ellipsis;vertical-align:bottom}
.colmenu{display:inline-block;position:relative;margin-left:4px}.colmenu>summary{list-style:none;color:#777;padding:0 3px}.colmenu>summary::-webkit-details-marker{display:none}
.colmenu>.menu{position:absolute;z-index:5;top:100%;left:0;background:#fff;border:1px solid #ccc;border-radius:4px;padding:6px 8px;white-space:nowrap;font-weight:400;box-shadow:0 2px 6px rgba(0,0,0,.15)}
.colmenu form{margin-top:6px}
table.records th a{color:#222}
table.records td.number{text-align:right;font-variant-numeric:tabular-nums}
table.records td.objectid code{font-size:12px;color:#555}
td .acts{visibility:hidden;margin-left:6px;font-size:11px}td:hover .acts,td:focus-within .acts{visibility:visible}
td .acts a{padding:0 3px;border:1px solid #ccc;border-radius:2px;background:#fff}
.nil{color:#999;font-style:italic}.geo{color:#186a3b}small{color:#888}
.paging{display:flex;gap:12px;margin:10px 0}
.facets{display:flex;flex-wrap:wrap;gap:10px}
.facet{border:1px solid #ddd;border-radius:4px;padding:6px 8px;min-width:14em;background:#fff}
.facet h3{font-size:13px;margin:0 0 4px;display:flex;gap:6px}.facet h3 span{max-width:26em;overflow:hidden;text-overflow:ellipsis;white-space:nowrap}.facet ol{margin:0;padding-left:0;list-style:none}
.facet li{display:flex;justify-content:space-between;gap:8px}.facet .n{color:#666;font-variant-numeric:tabular-nums}
pre{margin:0 0 8px;padding:8px;background:#f8f8f8;border:1px solid #ddd;border-radius:4px;overflow:auto;font-family:ui-monospace,Menlo,Consolas,monospace;font-size:12px;white-space:pre-wrap;word-break:break-all}
.k{color:#881391}.s{color:#1a1aa6}.l{color:#098658}.s a{color:inherit}
details>summary{cursor:pointer;color:#2c6dac}
.columns label{display:inline-block;min-width:14em;max-width:28em;margin:2px 8px 2px 0;overflow:hidden;text-overflow:ellipsis;white-space:nowrap;vertical-align:top}
table.schema{border-collapse:collapse}table.schema td.name{max-width:28em;overflow:hidden;text-overflow:ellipsis;white-space:nowrap}table.schema th,table.schema td{border-bottom:1px solid #eee;padding:4px 10px;text-align:left;vertical-align:top}
meter{width:60px;vertical-align:middle}
.listing{line-height:1.8;font-size:15px}
.histogram svg{display:block}.histogram svg a:hover rect+rect{fill:#a30000}.histogram .axis{display:flex;justify-content:space-between;color:#666;font-size:12px;width:480px}
#explorer-map{height:540px;border:1px solid #ddd;border-radius:4px;background:#f4f4f2}button[disabled]{opacity:.5;cursor:default}
`;

function crumbsHtml(crumbs: Shell['crumbs']): Html {
  const items = crumbs.map(([text, href]) => (href === null ? html`<span>${text}</span>` : html`<a href="${href}">${text}</a>`));
  return joinHtml(items, ' / ');
}

export function pageHtml(shell: Shell, body: Html): Html {
  const nonce = shell.nonce === undefined ? undefined : html` nonce="${shell.nonce}"`;
  const account =
    shell.username === null
      ? html`<a href="${urls.login(shell.here)}">Log in</a>`
      : html`${shell.username} · <a href="${urls.logout()}">Log out</a>`;
  // The stylesheet is this module's constant, written as is.
  return html`${DOCUMENT_START}<link rel="icon" href="${FAVICON_PATH}">
<title>${`${shell.heading} – Explore – ${shell.appTitle}`}</title>
<style${nonce}>${raw(STYLE)}</style>
</head>
<body>
<header class="navbar"><a class="brand" href="${urls.root()}">${shell.appTitle}</a><span><a class="manual" href="${MANUAL_PATH}">Manual</a> · ${account}</span></header>
<nav class="crumbs" aria-label="breadcrumb">${crumbsHtml(shell.crumbs)}</nav>
<main>
<h1>${shell.heading}</h1>
${body}</main>
</body>
</html>
`;
}
