import { describe, expect, it } from 'vitest';
import { safeNextPath } from '../../../src/auth/safe-redirect.js';

describe('safeNextPath', () => {
  it.each([
    ['/api/', '/api/'],
    ['/api/data_store/data/?page=2#top', '/api/data_store/data/?page=2#top'],
    ['/api/../admin/', '/admin/'],
    ['/api/queue/', '/api/queue/'],
  ])('keeps same-site path %s', (input, expected) => {
    expect(safeNextPath(input)).toBe(expected);
  });

  it.each([
    'https://evil.example/',
    '//evil.example/path',
    '/\\evil.example',
    '\\\\evil.example',
    'javascript:alert(1)',
    'api/relative',
    '/api/\nSet-Cookie: x=1',
    '/\t/evil.example',
    '',
    undefined,
    ['/api/'],
    '/' + 'a'.repeat(3000),
    // Same-site before normalisation, protocol-relative after it.
    '/.//evil.com',
    '/a/..//evil.com',
    '/%2e//evil.com',
    '/././/evil.com/x?y=1',
  ])('falls back for %j', (input) => {
    expect(safeNextPath(input)).toBe('/api/');
  });
});
