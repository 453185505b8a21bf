import jwt from 'jsonwebtoken';
import { describe, expect, it } from 'vitest';
import { ApiError } from '../../../src/errors.js';
import { JwtIssuer } from '../../../src/auth/jwt.js';

const SECRET = 'unit-test-secret-key-0123456789abcdefghijkl';
const issuer = new JwtIssuer({ secretKey: SECRET, accessTtlSeconds: 300, refreshTtlSeconds: 3600 });
const account = { id: '65f000000000000000000001', passwordStamp: 'stamp-1' };

function refusal(fn: () => unknown): ApiError {
  try {
    fn();
  } catch (err) {
    if (err instanceof ApiError) return err;
    throw err;
  }
  throw new Error('expected a refusal');
}

describe('JwtIssuer', () => {
  it('issues HS256 tokens with the documented claims', () => {
    const token = issuer.issue('access', account);
    const header = JSON.parse(Buffer.from(token.split('.')[0] as string, 'base64url').toString()) as { alg: string };
    expect(header.alg).toBe('HS256');
    const claims = issuer.verify(token, 'access');
    expect(claims).toMatchObject({ token_type: 'access', user_id: account.id, pwd: 'stamp-1' });
    expect(claims.exp - claims.iat).toBe(300);
    expect(claims.jti).toMatch(/^[0-9a-f-]{36}$/);
    expect(issuer.verify(issuer.issue('refresh', account), 'refresh').exp - claims.iat).toBeGreaterThanOrEqual(3600);
  });

  it('gives every token its own jti', () => {
    expect(issuer.verify(issuer.issue('access', account)).jti).not.toBe(issuer.verify(issuer.issue('access', account)).jti);
  });

  it('refuses the wrong token type', () => {
    const error = refusal(() => issuer.verify(issuer.issue('refresh', account), 'access'));
    expect(error.status).toBe(401);
    expect(error.code).toBe('token_not_valid');
  });

  it('refuses tampered, foreign, expired and unsigned tokens', () => {
    const token = issuer.issue('access', account);
    const [h, p, s] = token.split('.') as [string, string, string];
    const forgedPayload = Buffer.from(JSON.stringify({ ...issuer.verify(token), user_id: '65f000000000000000000002' })).toString(
      'base64url',
    );
    const expired = jwt.sign({ token_type: 'access', user_id: account.id, jti: 'x', pwd: 'stamp-1' }, SECRET, {
      algorithm: 'HS256',
      expiresIn: -10,
    });
    const otherKey = jwt.sign(
      { token_type: 'access', user_id: account.id, jti: 'x', pwd: 'stamp-1' },
      'another-secret-key-0123456789abcdefghij',
      { expiresIn: 60 },
    );
    const unsigned = `${Buffer.from('{"alg":"none","typ":"JWT"}').toString('base64url')}.${p}.`;
    const missingClaims = jwt.sign({ user_id: account.id }, SECRET, { expiresIn: 60 });
    for (const bad of [`${h}.${forgedPayload}.${s}`, expired, otherKey, unsigned, missingClaims, 'not-a-jwt', '', 'a'.repeat(5000)]) {
      const error = refusal(() => issuer.verify(bad));
      expect(error.status).toBe(401);
      expect(error.code).toBe('token_not_valid');
    }
    expect(refusal(() => issuer.verify(expired)).message).toMatch(/expired/);
  });
});
