/**
 * The start of a copy of `array` in which the item at `changedAt` is about to change: a new array
 * of the same length holding the items before it. Walks that type values (numbers made `Long`s or
 * `Double`s) copy an array only from its first changed item on, into a new array rather than the
 * original, because writing an object into an array of numbers makes V8 box each of its numbers.
 */
export function copyBefore(array: readonly unknown[], changedAt: number): unknown[] {
  const out = new Array<unknown>(array.length);
  for (let j = 0; j < changedAt; j += 1) out[j] = array[j];
  return out;
}
