/**
 * Days until the certificates this service is configured with expire, from their PEM files as
 * they are when scraped (so a rotated file shows at once); a file is parsed again only when its
 * inode, size or modification time changed, so a scrape costs one `stat` per file. A file
 * holding several certificates (a chain, a CA bundle, a client certificate with its key)
 * reports its earliest expiry: that is when something stops working. Labels are the setting
 * names, a fixed set.
 */
import { X509Certificate } from 'node:crypto';
import { readFileSync, statSync } from 'node:fs';
import { Gauge, type Registry } from 'prom-client';
import type { Settings } from '../config/settings.js';
import { METRIC_PREFIX, PROCESS_WIDE } from './registry.js';

const PEM_CERTIFICATE = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g;
const DAY_MS = 24 * 60 * 60 * 1000;

/** Setting name → certificate file, for every TLS file the settings name. */
export function certificateFiles(settings: Settings): Map<string, string> {
  const files = new Map<string, string | undefined>([
    ['HTTPS_CERT_FILE', settings.https?.certFile],
    ['MONGO_TLS_CA_FILE', settings.mongo.tlsCaFile],
    ['MONGO_TLS_CERT_KEY_FILE', settings.mongo.tlsCertKeyFile],
    ['BROKER_TLS_CA_FILE', settings.broker?.tlsCaFile],
    ['BROKER_TLS_CERT_FILE', settings.broker?.tlsCertFile],
  ]);
  return new Map([...files].filter((entry): entry is [string, string] => entry[1] !== undefined));
}

/** The earliest expiry (ms since the epoch) among the certificates in `pem`; null if none. */
export function earliestExpiry(pem: string): number | null {
  let earliest: number | null = null;
  for (const block of pem.match(PEM_CERTIFICATE) ?? []) {
    const notAfter = new Date(new X509Certificate(block).validTo).getTime();
    if (earliest === null || notAfter < earliest) earliest = notAfter;
  }
  return earliest;
}

/** Days (fractional) until the earliest expiry among the certificates in `pem`; null if none. */
export function daysLeft(pem: string, now = Date.now()): number | null {
  const earliest = earliestExpiry(pem);
  return earliest === null ? null : (earliest - now) / DAY_MS;
}

/** Earliest expiries of certificate files, parsed again only when a file changed. */
export class CertificateExpiries {
  private readonly parsed = new Map<string, { version: string; expiry: number | null }>();

  /** The earliest expiry in `file` (ms since the epoch); null if it holds none; throws if unreadable. */
  of(file: string): number | null {
    const stat = statSync(file);
    const version = `${stat.ino}:${stat.size}:${stat.mtimeMs}`;
    const known = this.parsed.get(file);
    if (known?.version === version) return known.expiry;
    const expiry = earliestExpiry(readFileSync(file, 'utf8'));
    this.parsed.set(file, { version, expiry });
    return expiry;
  }
}

export function registerCertificateMetrics(registry: Registry, files: Map<string, string>): void {
  if (files.size === 0) return;
  const expiries = new CertificateExpiries();
  new Gauge({
    name: `${METRIC_PREFIX}certificate_days_left`,
    help: 'Days until the earliest certificate in a configured TLS file expires (negative: expired), by setting name',
    labelNames: ['certificate'],
    registers: [registry],
    aggregator: PROCESS_WIDE,
    collect() {
      this.reset();
      for (const [setting, file] of files) {
        try {
          const expiry = expiries.of(file);
          if (expiry !== null) this.set({ certificate: setting }, (expiry - Date.now()) / DAY_MS);
        } catch {
          // Unreadable or not a certificate: the series is missing, which an alert on absence catches.
        }
      }
    },
  });
}
