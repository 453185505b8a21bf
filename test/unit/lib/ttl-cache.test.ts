import { describe, expect, it } from 'vitest';
import { TtlCache } from '../../../src/lib/ttl-cache.js';

describe('TtlCache', () => {
  it('expires entries after the ttl and caps its size', () => {
    let now = 0;
    const cache = new TtlCache<string, number>(2_000, 2, () => now);
    cache.set('a', 1);
    cache.set('b', 2);
    now = 1_999;
    expect(cache.get('a')).toBe(1);
    cache.set('c', 3); // evicts the oldest insertion ("a")
    expect(cache.get('a')).toBeUndefined();
    expect(cache.size).toBe(2);
    now = 2_000;
    expect(cache.get('b')).toBeUndefined();
    expect(cache.get('c')).toBe(3);
  });

  it('drops entries explicitly', () => {
    const cache = new TtlCache<string, string>(10_000);
    cache.set('k1', 'u1');
    cache.set('k2', 'u1');
    cache.set('k3', 'u2');
    cache.deleteWhere((v) => v === 'u1');
    expect([cache.get('k1'), cache.get('k2'), cache.get('k3')]).toEqual([undefined, undefined, 'u2']);
    cache.delete('k3');
    expect(cache.size).toBe(0);
  });

  it('ends an entry at the expiry it is given, never later than the ttl', () => {
    let now = 0;
    const cache = new TtlCache<string, number>(2_000, 10, () => now);
    cache.set('short', 1, 500);
    cache.set('long', 2, 5_000);
    now = 499;
    expect(cache.get('short')).toBe(1);
    now = 500;
    expect(cache.get('short')).toBeUndefined();
    now = 1_999;
    expect(cache.get('long')).toBe(2);
    now = 2_000;
    expect(cache.get('long')).toBeUndefined();
    cache.set('long', 3);
    cache.set('long', 4, now);
    expect([cache.get('long'), cache.size]).toEqual([undefined, 0]);
  });
});
