/**
 * AMQP field tables (message headers, queue arguments) whose numbers every released py-amqp
 * reads back as the same number.
 *
 * Left to itself, amqplib encodes an integer in the narrowest type: 'b' (8-bit) up to 127, 's'
 * (16-bit) up to 32767, 'I' (32-bit), then 'l' (64-bit). py-amqp up to 5.3.1 disagrees with that
 * on two of them: it reads 's' as a *short string* (so the next bytes are taken as a length and
 * text, and the rest of the frame is garbage — IndexError or UnexpectedFrame), and 'b' as an
 * unsigned byte (-1 arrives as 255). Kombu's Lamport `clock` header crosses 127 within minutes of
 * remote control, after which `celery inspect` fails and a Celery 5.2 worker dies during start.
 *
 * The types every py-amqp reads like RabbitMQ does, and the ones used here:
 * - 'I' signed 32-bit: every integer from -2^31 to 2^31-1 (what py-amqp itself writes for them);
 * - 'l' 64-bit for larger non-negative integers: RabbitMQ and py-amqp ≥ 5.4 read it signed,
 *   older py-amqp unsigned, which agree for every value up to 2^63-1;
 * - 'd' double for fractions and for integers below -2^31 (no 64-bit type amqplib can write is
 *   read as signed by older py-amqp), so Python sees a float of the same value.
 * Strings, booleans, null and byte buffers are unambiguous and pass through unchanged.
 */

/** amqplib's way to force a field type: `{ '!': type, value }`. */
export interface TypedField {
  '!': 'int' | 'long' | 'double';
  value: number;
}

const INT32_MIN = -0x8000_0000;
const INT32_MAX = 0x7fff_ffff;

/** The field-table encoding of one number. */
export function numberField(n: number): TypedField {
  if (!Number.isInteger(n)) return { '!': 'double', value: n };
  if (n >= INT32_MIN && n <= INT32_MAX) return { '!': 'int', value: n };
  if (n > INT32_MAX && n <= Number.MAX_SAFE_INTEGER) return { '!': 'long', value: n };
  return { '!': 'double', value: n };
}

const isTyped = (value: object): boolean => Object.hasOwn(value, '!');

/** One field value, numbers typed at any depth (inside arrays and nested tables too). */
export function fieldValue(value: unknown): unknown {
  if (typeof value === 'number') return numberField(value);
  if (value === null || typeof value !== 'object' || Buffer.isBuffer(value)) return value;
  if (Array.isArray(value)) return value.map(fieldValue);
  if (isTyped(value)) return value;
  return fieldTable(value as Record<string, unknown>);
}

/** A whole table (headers or arguments) for amqplib, numbers typed as above. */
export function fieldTable(table: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(table)) {
    if (value !== undefined) out[key] = fieldValue(value);
  }
  return out;
}
