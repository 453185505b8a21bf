import { describe, expect, it } from 'vitest';
import { ApiError } from '../../../src/errors.js';
import { canonicalPathAndQuery, withLinkParam, withoutLinkParam } from '../../../src/links/link-path.js';
import { isLinkable } from '../../../src/links/link-scope.js';
import { LinkSigner } from '../../../src/links/link-token.js';

const SECRET = 'a-test-secret-of-at-least-32-characters!';

const refusal = (fn: () => unknown): string => {
  try {
    fn();
  } catch (err) {
    if (err instanceof ApiError) return `${err.status} ${err.code} ${err.message}`;
    throw err;
  }
  return 'accepted';
};

describe('signed link tokens', () => {
  it('round-trip the user, the path and the credentials stamp', () => {
    const signer = new LinkSigner(SECRET);
    const { token, expires } = signer.sign({ userId: 'u1', path: '/api/x/?format=csv', credentials: 'stamp-1' }, 600);
    expect(signer.verify(token)).toEqual({ userId: 'u1', path: '/api/x/?format=csv', credentials: 'stamp-1' });
    expect(expires.getTime() - Date.now()).toBeGreaterThan(590_000);
    expect(expires.getTime() - Date.now()).toBeLessThanOrEqual(600_000);
  });

  it('refuse a token signed with another secret, a changed one and an expired one', () => {
    const signer = new LinkSigner(SECRET);
    const other = new LinkSigner(`${SECRET}-other`).sign({ userId: 'u1', path: '/api/', credentials: 'stamp-1' }, 60).token;
    expect(refusal(() => signer.verify(other))).toBe('401 link_not_valid The link is not valid.');
    const token = signer.sign({ userId: 'u1', path: '/api/', credentials: 'stamp-1' }, 60).token;
    const [h, p, s] = token.split('.') as [string, string, string];
    const forged = Buffer.from(JSON.stringify({ ...JSON.parse(Buffer.from(p, 'base64url').toString()), sub: 'admin' })).toString(
      'base64url',
    );
    expect(refusal(() => signer.verify(`${h}.${forged}.${s}`))).toBe('401 link_not_valid The link is not valid.');
    const expired = signer.sign({ userId: 'u1', path: '/api/', credentials: 'stamp-1' }, -1).token;
    expect(refusal(() => signer.verify(expired))).toBe('401 link_not_valid The link has expired.');
  });

  it('refuse a token without a credentials stamp (as links were signed before they carried one)', () => {
    const signer = new LinkSigner(SECRET);
    const legacy = signer.sign({ userId: 'u1', path: '/api/x/' } as never, 60).token;
    expect(refusal(() => signer.verify(legacy))).toBe('401 link_not_valid The link is not valid.');
  });
});

describe('link parameters in a path', () => {
  it('are added last and removed wherever they are, other parameters kept byte for byte', () => {
    expect(withLinkParam('/api/x/', 't.k')).toBe('/api/x/?link=t.k');
    expect(withLinkParam('/api/x/?a=%7B1%7D', 't')).toBe('/api/x/?a=%7B1%7D&link=t');
    expect(withoutLinkParam('/api/x/?a=%7B1%7D&link=t')).toBe('/api/x/?a=%7B1%7D');
    expect(withoutLinkParam('/api/x/?link=t&a=1')).toBe('/api/x/?a=1');
    expect(withoutLinkParam('/api/x/?link=t')).toBe('/api/x/');
    expect(withoutLinkParam('/api/x/?linked=1')).toBe('/api/x/?linked=1');
  });
});

describe('the canonical spelling of a path and query', () => {
  it('is the same however a client encodes the URL', () => {
    const canonical = canonicalPathAndQuery('/api/d/c/?format=csv&query={"filter":{"a":1}}');
    expect(canonicalPathAndQuery('/api/d/c/?format=csv&query=%7B%22filter%22%3A%7B%22a%22%3A1%7D%7D')).toBe(canonical);
    expect(canonicalPathAndQuery('/api/d/c/?format=csv&query=%7b"filter":%7b"a":1}}')).toBe(canonical);
    expect(canonicalPathAndQuery('/api/d%20x/c/?q=a+b')).toBe(canonicalPathAndQuery('/api/d x/c/?q=a%20b'));
  });

  it('still tells different paths, values and orders apart', () => {
    const canonical = canonicalPathAndQuery('/api/d/c/?a=1&b=2');
    expect(canonicalPathAndQuery('/api/d/c/?b=2&a=1')).not.toBe(canonical);
    expect(canonicalPathAndQuery('/api/d/c/?a=1&b=3')).not.toBe(canonical);
    expect(canonicalPathAndQuery('/api/d/e/?a=1&b=2')).not.toBe(canonical);
    expect(canonicalPathAndQuery('/api/d/c/?a=1%262')).not.toBe(canonicalPathAndQuery('/api/d/c/?a=1&2'));
    expect(canonicalPathAndQuery('/api/d/c/?q=a%2Bb')).not.toBe(canonicalPathAndQuery('/api/d/c/?q=a+b'));
  });
});

describe('what a link may point to', () => {
  it('is a record read of the data store or the catalog, however the path is spelt', () => {
    expect(isLinkable('/api/data_store/data/')).toBe(true);
    expect(isLinkable('/api/data_store/data/db/col/?format=csv&query={"filter":{}}')).toBe(true);
    expect(isLinkable('/api/data_store/data/db/col/65a1b2c3d4e5f60718293a01/')).toBe(true);
    expect(isLinkable('/api/catalog/data/cat/datasets/?distinct=title')).toBe(true);
    expect(isLinkable('/api/%64ata_store/data/db/')).toBe(true);
  });

  it('is never the profile, tokens, links, the admin site, the queue or index management', () => {
    for (const path of [
      '/api/user/',
      '/api/token/',
      '/api/links/',
      '/api/admin/',
      '/api/queue/',
      '/api/data_store/indexes/db/col/',
      '/api/data_store/data',
      '/api/data_store/data?x=/api/data_store/data/',
      '/API/DATA_STORE/DATA/db/',
      '/api/data_store%2Fdata/db/',
    ]) {
      expect(isLinkable(path), path).toBe(false);
    }
  });
});
