/**
 * The two small HTML pages of browser sign-in: the login form and the logout confirmation.
 * Self-contained (no external assets), every interpolated value escaped, and the one inline
 * style carries the request's CSP nonce.
 */
import escapeHtml from 'escape-html';
import { CSRF_FORM_FIELD } from './csrf.js';
import { urls } from '../http/urls.js';

export interface PageShell {
  title: string;
  /** From res.locals.cspNonce (security-headers middleware). */
  cspNonce: string | undefined;
}

const STYLE = `
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;background:#f4f5f7;margin:0;color:#222}
main{max-width:22rem;margin:4rem auto;background:#fff;padding:2rem;border-radius:6px;box-shadow:0 1px 4px rgba(0,0,0,.15)}
h1{font-size:1.3rem;margin:0 0 1.2rem}
label{display:block;font-size:.9rem;margin:.8rem 0 .3rem}
input[type=text],input[type=password]{width:100%;box-sizing:border-box;padding:.5rem;border:1px solid #bbb;border-radius:4px;font-size:1rem}
button{margin-top:1.2rem;width:100%;padding:.6rem;border:0;border-radius:4px;background:#2c5d8a;color:#fff;font-size:1rem;cursor:pointer}
.error{background:#fdecea;color:#8a1c12;padding:.6rem;border-radius:4px;font-size:.9rem}
p.note{font-size:.85rem;color:#555}
`;

function page(shell: PageShell, heading: string, body: string): string {
  const nonce = shell.cspNonce === undefined ? '' : ` nonce="${escapeHtml(shell.cspNonce)}"`;
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title>${escapeHtml(heading)} | ${escapeHtml(shell.title)}</title>
<style${nonce}>${STYLE}</style>
</head>
<body>
<main>
<h1>${escapeHtml(shell.title)}: ${escapeHtml(heading)}</h1>
${body}
</main>
</body>
</html>
`;
}

export interface LoginPageValues {
  action: string;
  csrfToken: string;
  next: string;
  username?: string;
  error?: string;
}

export function loginPage(shell: PageShell, values: LoginPageValues): string {
  const error = values.error === undefined ? '' : `<p class="error" role="alert">${escapeHtml(values.error)}</p>\n`;
  return page(
    shell,
    'Log in',
    `${error}<form method="post" action="${escapeHtml(values.action)}">
<input type="hidden" name="${CSRF_FORM_FIELD}" value="${escapeHtml(values.csrfToken)}">
<input type="hidden" name="next" value="${escapeHtml(values.next)}">
<label for="id_username">Username</label>
<input type="text" name="username" id="id_username" autocomplete="username" autocapitalize="none" maxlength="150" required autofocus value="${escapeHtml(values.username ?? '')}">
<label for="id_password">Password</label>
<input type="password" name="password" id="id_password" autocomplete="current-password" required>
<button type="submit">Log in</button>
</form>`,
  );
}

export interface LogoutPageValues {
  action: string;
  csrfToken: string;
  username: string | null;
}

export function logoutPage(shell: PageShell, values: LogoutPageValues): string {
  const who = values.username === null ? 'You are not logged in.' : `You are logged in as ${escapeHtml(values.username)}.`;
  return page(
    shell,
    'Log out',
    `<p>${who}</p>
<form method="post" action="${escapeHtml(values.action)}">
<input type="hidden" name="${CSRF_FORM_FIELD}" value="${escapeHtml(values.csrfToken)}">
<button type="submit">Log out</button>
</form>
<p class="note"><a href="${escapeHtml(urls.root())}">Back to the API</a></p>`,
  );
}
