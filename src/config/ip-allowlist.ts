/**
 * Client addresses allowed to read the metrics without credentials (METRICS_ALLOWED_IPS): single
 * IPv4/IPv6 addresses and CIDR blocks. An IPv4 client reached over an IPv6 socket shows up as
 * `::ffff:a.b.c.d` and is matched as the IPv4 address it is.
 */
import { BlockList, isIP } from 'node:net';

export interface IpAllowList {
  readonly empty: boolean;
  allows(address: string | undefined): boolean;
}

const MAPPED_IPV4 = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i;

/** The problem with one entry, or null when it is an address or a CIDR block. */
export function allowListEntryProblem(entry: string): string | null {
  const [address, prefix, extra] = entry.split('/');
  const family = isIP(address ?? '');
  if (family === 0 || extra !== undefined) return `"${entry}" is not an IP address or CIDR block`;
  if (prefix === undefined) return null;
  const bits = /^\d{1,3}$/.test(prefix) ? Number(prefix) : NaN;
  if (!(bits >= 0 && bits <= (family === 4 ? 32 : 128))) return `"${entry}" has an invalid prefix length`;
  return null;
}

/** Builds the list; entries must have passed allowListEntryProblem. */
export function ipAllowList(entries: readonly string[]): IpAllowList {
  const list = new BlockList();
  for (const entry of entries) {
    const [address = '', prefix] = entry.split('/');
    const type = isIP(address) === 6 ? 'ipv6' : 'ipv4';
    if (prefix === undefined) list.addAddress(address, type);
    else list.addSubnet(address, Number(prefix), type);
  }
  const empty = entries.length === 0;
  return {
    empty,
    allows(address) {
      if (empty || address === undefined) return false;
      const mapped = MAPPED_IPV4.exec(address);
      const plain = mapped?.[1] ?? address;
      const family = isIP(plain);
      if (family === 0) return false;
      return list.check(plain, family === 6 ? 'ipv6' : 'ipv4');
    },
  };
}
