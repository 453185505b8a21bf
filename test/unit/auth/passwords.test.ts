import { describe, expect, it } from 'vitest';
import {
  CURRENT_PARAMETERS,
  hashPassword,
  isUsablePasswordHash,
  needsRehash,
  unusablePassword,
  verifyPassword,
} from '../../../src/auth/passwords.js';
import { passwordWeaknesses, weakPasswordError } from '../../../src/auth/password-strength.js';

describe('scrypt password hashes', () => {
  it('encodes algorithm, parameters, salt and key', async () => {
    const hash = await hashPassword('correct horse battery staple');
    const parts = hash.split('$');
    expect(parts).toHaveLength(6);
    expect(parts.slice(0, 4)).toEqual(['scrypt', String(2 ** 15), '8', '1']);
    expect(Buffer.from(parts[4] as string, 'base64')).toHaveLength(16);
    expect(Buffer.from(parts[5] as string, 'base64')).toHaveLength(32);
    expect(hash).not.toContain('correct horse');
  });

  it('verifies the right password and refuses others', async () => {
    const hash = await hashPassword('s3cret-Passphrase');
    expect(await verifyPassword('s3cret-Passphrase', hash)).toBe(true);
    expect(await verifyPassword('s3cret-passphrase', hash)).toBe(false);
    expect(await verifyPassword('', hash)).toBe(false);
    expect(await verifyPassword('s3cret-Passphrase ', hash)).toBe(false);
  });

  it('salts every hash', async () => {
    const [a, b] = await Promise.all([hashPassword('same password'), hashPassword('same password')]);
    expect(a).not.toBe(b);
    expect(await verifyPassword('same password', a)).toBe(true);
    expect(await verifyPassword('same password', b)).toBe(true);
  });

  it('treats Unicode compositions alike (NFKC)', async () => {
    const hash = await hashPassword('caf\u00e9-latte-42');
    expect(await verifyPassword('cafe\u0301-latte-42', hash)).toBe(true);
  });

  it('never matches unusable, missing or malformed hashes', async () => {
    for (const stored of [unusablePassword(), null, undefined, '', 'scrypt$1$8$1$AAAA$BBBB', 'pbkdf2_sha256$1$x$y', 'scrypt$abc$8$1$x$y']) {
      expect(await verifyPassword('anything', stored)).toBe(false);
      expect(isUsablePasswordHash(stored)).toBe(false);
    }
  });

  it('refuses parameters that would exhaust memory instead of running them', async () => {
    const hash = await hashPassword('pw-for-tamper-test');
    const parts = hash.split('$');
    parts[1] = String(2 ** 30);
    const started = Date.now();
    expect(await verifyPassword('pw-for-tamper-test', parts.join('$'))).toBe(false);
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it('flags hashes made with other parameters for re-hashing', async () => {
    const old = await hashPassword('upgrade-me-please', { N: 2 ** 14, r: 8, p: 1 });
    expect(await verifyPassword('upgrade-me-please', old)).toBe(true);
    expect(needsRehash(old)).toBe(true);
    expect(needsRehash(await hashPassword('upgrade-me-please'))).toBe(false);
    expect(CURRENT_PARAMETERS.N).toBeGreaterThanOrEqual(2 ** 15);
  });
});

describe('password strength', () => {
  it.each([
    { password: 'short1', username: 'bob', reasons: ['too_short'] },
    { password: '12345', username: 'bob', reasons: ['too_short', 'entirely_numeric'] },
    { password: '9876543210123', username: 'bob', reasons: ['entirely_numeric'] },
    { password: 'password', username: 'bob', reasons: ['too_common'] },
    { password: 'PassWord123', username: 'bob', reasons: ['too_common'] },
    { password: '12345678', username: 'bob', reasons: ['entirely_numeric', 'too_common'] },
    { password: 'alice.smith', username: 'Alice.Smith', reasons: ['same_as_username'] },
    { password: 'x'.repeat(1025), username: 'bob', reasons: ['too_long'] },
    { password: 'tr0ub4dor&3x', username: 'bob', reasons: [] },
    { password: 'correct horse battery staple', username: 'bob', reasons: [] },
  ])('$password → $reasons', ({ password, username, reasons }) => {
    expect(passwordWeaknesses(password, username)).toEqual(reasons);
  });

  it('counts characters, not bytes', () => {
    expect(passwordWeaknesses('ééééééé', 'bob')).toEqual(['too_short']);
    expect(passwordWeaknesses('éééééééé', 'bob')).toEqual([]);
  });

  it('reports a 400 weak_password error with every reason', () => {
    const error = weakPasswordError('1234', 'bob');
    expect(error?.status).toBe(400);
    expect(error?.code).toBe('weak_password');
    expect(error?.detail).toEqual({
      reasons: [
        { code: 'too_short', message: expect.any(String) },
        { code: 'entirely_numeric', message: expect.any(String) },
      ],
    });
    expect(weakPasswordError('a-Good-one-2024', 'bob')).toBeNull();
  });
});
