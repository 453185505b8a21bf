/**
 * How a BSON double is written in every text format: so that it reads back as a double, as
 * MongoDB's relaxed Extended JSON writes it. A whole value gets `.0` (`3.0`, `-0.0`); any other
 * finite value is JavaScript's shortest round-trip text, which already holds a `.` or an
 * exponent (`0.5`, `1e+21`, `5e-324`). Not finite (±Infinity, NaN), which JSON has no literal
 * for: the canonical Extended JSON `{"$numberDouble": "Infinity"}` (`"-Infinity"`, `"NaN"`),
 * which the API reads back as that double; in CSV `inf`, `-inf` and `nan`, as Python and pandas
 * read them.
 */
import { IntegralDouble } from './types.js';

/** Extended JSON's name of a double that is not finite. */
export function nonFiniteName(value: number): 'Infinity' | '-Infinity' | 'NaN' {
  if (Number.isNaN(value)) return 'NaN';
  return value > 0 ? 'Infinity' : '-Infinity';
}

/** A double that is not finite, in the plain tree: its Extended JSON wrapper. */
export const nonFiniteDouble = (value: number): { $numberDouble: string } => ({ $numberDouble: nonFiniteName(value) });

/** The JSON text of a double that is not finite. */
export const nonFiniteJson = (value: number): string => `{"$numberDouble":"${nonFiniteName(value)}"}`;

/** The CSV cell of a double that is not finite. */
export function nonFiniteCsv(value: number): string {
  if (Number.isNaN(value)) return 'nan';
  return value > 0 ? 'inf' : '-inf';
}

/** Whether a plain value is the wrapper nonFiniteDouble makes, and its number if so. */
export function nonFiniteValue(value: unknown): number | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const text = (value as { $numberDouble?: unknown }).$numberDouble;
  if (text !== 'Infinity' && text !== '-Infinity' && text !== 'NaN') return undefined;
  return Object.keys(value).length === 1 ? Number(text) : undefined;
}

/** The text of a double, `3.0` for 3 and `-0.0` for -0; not finite, its Extended JSON wrapper. */
export function doubleText(value: number): string {
  if (!Number.isFinite(value)) return nonFiniteJson(value);
  if (Object.is(value, -0)) return '-0.0';
  const text = String(value);
  return Number.isInteger(value) && !text.includes('e') ? `${text}.0` : text;
}

/** The plain tree's form of a double: a number unless its text would read back as an integer. */
export function plainDouble(value: number): number | IntegralDouble | { $numberDouble: string } {
  if (!Number.isFinite(value)) return nonFiniteDouble(value);
  return Number.isInteger(value) && Math.abs(value) < 1e21 ? new IntegralDouble(value) : value;
}
