/**
 * How a BSON double is written in every text format: so that it reads back as a double, as
 * MongoDB's relaxed Extended JSON writes it. A whole value gets `.0` (`3.0`, `-0.0`); any other
 * finite value is JavaScript's shortest round-trip text, which already holds a `.` or an
 * exponent (`0.5`, `1e+21`, `5e-324`). Not finite: `null`, as JSON.stringify writes it.
 */
import { IntegralDouble } from './types.js';

/** The text of a double (a finite number), `3.0` for 3 and `-0.0` for -0. */
export function doubleText(value: number): string {
  if (!Number.isFinite(value)) return 'null';
  if (Object.is(value, -0)) return '-0.0';
  const text = String(value);
  return Number.isInteger(value) && !text.includes('e') ? `${text}.0` : text;
}

/** The plain tree's form of a double: a number unless its text would read back as an integer. */
export function plainDouble(value: number): number | IntegralDouble | null {
  if (!Number.isFinite(value)) return null;
  return Number.isInteger(value) && Math.abs(value) < 1e21 ? new IntegralDouble(value) : value;
}
