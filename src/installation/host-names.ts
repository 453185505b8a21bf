/** Host names the installer and the worker bundle accept for the server's public address. */
import { isIP } from 'node:net';

/** One DNS label: letters, digits and inner hyphens, at most 63 characters. */
const HOST_LABEL = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/i;

/** An error message, or undefined for a valid host name, IP address (IPv6 also in brackets) or the empty string. */
export function validateHostName(value: string): string | undefined {
  if (value === '') return undefined;
  const host = value.replace(/^\[(.*)\]$/, '$1');
  if (isIP(host) !== 0) return undefined;
  if (host.length > 253 || !host.split('.').every((label) => HOST_LABEL.test(label))) {
    return `"${value}" is not a valid host name (letters, digits, hyphens and dots) or IP address`;
  }
  return undefined;
}
