import { describe, expect, it } from 'vitest';
import { decodeAdmin, encodeAdmin } from '../../../src/admin/process/admin-process.js';

describe('the administrator a forwarded admin request stands for', () => {
  const admin = { email: 'ann', title: 'Staff', id: '64b7f0c2a1e4d3b2c1a09f8e', username: 'ann', isSuperuser: false, isTaskAdmin: false };

  it('reads back as written, whatever the username holds', () => {
    expect(decodeAdmin(encodeAdmin(admin))).toEqual(admin);
    const odd = { ...admin, username: 'ä "x"\n;', email: 'ä "x"\n;' };
    const encoded = encodeAdmin(odd);
    // A header value: no line breaks, quotes or separators.
    expect(encoded).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(decodeAdmin(encoded)).toEqual(odd);
  });

  it('is refused when missing, unreadable or of the wrong shape', () => {
    expect(decodeAdmin(undefined)).toBeUndefined();
    expect(decodeAdmin('')).toBeUndefined();
    expect(decodeAdmin('not base64 json')).toBeUndefined();
    expect(decodeAdmin(Buffer.from('null').toString('base64url'))).toBeUndefined();
    expect(decodeAdmin(Buffer.from(JSON.stringify({ ...admin, isSuperuser: 'yes' })).toString('base64url'))).toBeUndefined();
    expect(decodeAdmin(Buffer.from(JSON.stringify({ username: 'ann' })).toString('base64url'))).toBeUndefined();
    const { isTaskAdmin: _left, ...withoutTaskAdmin } = admin;
    expect(decodeAdmin(Buffer.from(JSON.stringify(withoutTaskAdmin)).toString('base64url'))).toBeUndefined();
  });
});
