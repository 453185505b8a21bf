import { describe, expect, it } from 'vitest';
import { hostWithoutPort, isHostAllowed } from '../../../src/http/allowed-hosts.js';

describe('ALLOWED_HOSTS matching', () => {
  it.each([
    ['localhost:8080', ['localhost'], true],
    ['LOCALHOST', ['localhost'], true],
    ['example.org', ['.example.org'], true],
    ['api.example.org', ['.example.org'], true],
    ['evilexample.org', ['.example.org'], false],
    ['example.org.', ['example.org'], true],
    ['other.org', ['example.org'], false],
    ['anything.net:443', ['*'], true],
    ['[::1]:8080', ['[::1]'], true],
    ['127.0.0.1:80', ['localhost'], false],
    ['', ['*'], false],
    ['bad host', ['*'], false],
    ['a.org/evil', ['*'], false],
    // Not a host[:port] at all: no URL can be built from them.
    ['localhost:abc', ['*'], false],
    ['localhost:', ['*'], false],
    ['localhost:99999', ['*'], false],
    ['a:b:c', ['*'], false],
    ['[::1', ['*'], false],
    ['-lead.example.org', ['*'], false],
    ['localhost:65535', ['localhost'], true],
    ['127.0.0.1:8080', ['127.0.0.1'], true],
  ])('%s with %j → %s', (host, allowed, expected) => {
    expect(isHostAllowed(host, allowed)).toBe(expected);
  });

  it('strips ports but keeps IPv6 brackets', () => {
    expect(hostWithoutPort('[::1]:8080')).toBe('[::1]');
    expect(hostWithoutPort('Example.org:443')).toBe('example.org');
    expect(hostWithoutPort('10.0.0.1')).toBe('10.0.0.1');
  });
});
