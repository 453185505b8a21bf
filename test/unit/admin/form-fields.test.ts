import { flat } from 'adminjs';
import { describe, expect, it } from 'vitest';
import { namesPrototype, withoutPrototypeKeys } from '../../../src/admin/form-fields.js';

describe('admin form fields', () => {
  it.each(['__proto__', '__proto__.x', 'constructor.prototype.x', 'a.__proto__.polluted', 'a[__proto__][x]', 'filters.constructor'])(
    'drops %s',
    (key) => {
      expect(namesPrototype(key)).toBe(true);
      expect(withoutPrototypeKeys({ [key]: 'yes', username: 'kept' })).toEqual({ username: 'kept' });
    },
  );

  it('keeps ordinary flattened fields, and drops prototype keys inside JSON values', () => {
    const fields = JSON.parse('{"permissions.0":"a","groups":["g"],"data":{"__proto__":{"polluted":1},"ok":1}}') as Record<string, unknown>;
    expect(withoutPrototypeKeys(fields)).toEqual({ 'permissions.0': 'a', groups: ['g'], data: { ok: 1 } });
  });

  it("leaves nothing that AdminJS's unflatten could turn into a polluted prototype", () => {
    const payload = withoutPrototypeKeys({ '__proto__.polluted': 'yes', 'constructor.prototype.polluted': 'yes', name: 'g' });
    flat.unflatten(payload);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(payload).toEqual({ name: 'g' });
  });
});
