/** TRUST_PROXY: off, one hop, or a list of proxy addresses; anything else refused at start-up. */
import { describe, expect, it } from 'vitest';
import { ConfigError, loadSettings } from '../../../src/config/settings.js';
import { expressTrustProxy, parseTrustProxy } from '../../../src/config/trusted-proxy.js';

const minimal = { SECRET_KEY: 'k'.repeat(40), MONGO_URI: 'mongodb://localhost:27017/' };

describe('TRUST_PROXY', () => {
  it.each([
    ['false', false],
    ['0', false],
    ['true', true],
    ['yes', true],
    ['127.0.0.1', ['127.0.0.1']],
    ['10.0.0.0/8, ::1 ,fd00::/8', ['10.0.0.0/8', '::1', 'fd00::/8']],
    ['loopback,uniquelocal,linklocal', ['loopback', 'uniquelocal', 'linklocal']],
  ])('reads %j', (text, expected) => {
    expect(parseTrustProxy(text)).toEqual(expected);
    expect(loadSettings({ ...minimal, TRUST_PROXY: text }).trustProxy).toEqual(expected);
  });

  it('is off by default', () => {
    expect(loadSettings(minimal).trustProxy).toBe(false);
  });

  it.each(['proxy.example.org', '10.0.0.0/33', '::1/129', '10.0.0.1/8/1', '1.2.3', ','])('refuses %j at start-up', (text) => {
    expect(() => loadSettings({ ...minimal, TRUST_PROXY: text })).toThrow(ConfigError);
  });

  it("gives express one hop for true and the list as it is, so only the listed peers' headers count", () => {
    expect(expressTrustProxy(true)).toBe(1);
    expect(expressTrustProxy(false)).toBe(false);
    expect(expressTrustProxy(['127.0.0.1'])).toEqual(['127.0.0.1']);
  });
});
