/**
 * Form fields and query parameters as AdminJS may see them. AdminJS reads flattened keys
 * (`permissions.0`, `filters.username`) and unflattens them into objects; a key naming an
 * object's prototype (`__proto__.x`, `constructor.prototype.x`, `a[__proto__]`) is never a field
 * of a record, and unflattened it either fails deep inside AdminJS or reaches the prototype of
 * every object. Such keys are dropped, at any depth of a JSON body, before AdminJS sees the
 * request; everything else passes unchanged.
 */
import isPlainObject from 'is-plain-obj';

const PROTOTYPE_SEGMENTS: ReadonlySet<string> = new Set(['__proto__', 'constructor', 'prototype']);

/** Whether a flattened key names a prototype on its way (`.`, `[` and `]` separate the segments). */
export function namesPrototype(key: string): boolean {
  return key.split(/[.[\]]/).some((segment) => PROTOTYPE_SEGMENTS.has(segment));
}

function clean(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(clean);
  return isPlainObject(value) ? withoutPrototypeKeys(value) : value;
}

/** A plain copy of `fields` without the keys that name a prototype. */
export function withoutPrototypeKeys(fields: Record<string, unknown>): Record<string, unknown> {
  const kept: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(fields)) {
    if (!namesPrototype(key)) kept[key] = clean(value);
  }
  return kept;
}
