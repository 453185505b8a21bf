import { describe, expect, it } from 'vitest';
import { RevokedSet } from '../../../src/worker/revoked-set.js';

describe('RevokedSet', () => {
  it('remembers ids', () => {
    const set = new RevokedSet();
    set.add('a');
    expect(set.has('a')).toBe(true);
    expect(set.has('b')).toBe(false);
  });

  it('drops the oldest beyond its bound', () => {
    const set = new RevokedSet(3);
    ['a', 'b', 'c', 'd'].forEach((id) => set.add(id));
    expect(set.ids()).toEqual(['b', 'c', 'd']);
  });

  it('forgets ids after the expiry', () => {
    const set = new RevokedSet(10, 1_000);
    set.add('old', Date.now() - 2_000);
    set.add('new');
    expect(set.has('old')).toBe(false);
    expect(set.has('new')).toBe(true);
  });

  it('merges hello payloads in both Python shapes', () => {
    const set = new RevokedSet();
    const now = Date.now() / 1000;
    set.mergeHelloPayload({ a: now, b: [now, 1], c: 'bad' });
    expect(set.ids().sort()).toEqual(['a', 'b']);
    set.mergeHelloPayload(null);
    set.mergeHelloPayload([1, 2]);
    expect(set.size).toBe(2);
  });
});
