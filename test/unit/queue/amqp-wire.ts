/**
 * Field tables as they cross the wire: amqplib's own encoder (the bytes the broker and every
 * peer receive), amqplib's decoder, and a reader that decodes like py-amqp 1.4 to 5.3.1 does
 * (`amqp/serialization.py`, `_read_item`): 's' is a short *string* there, 'b' an unsigned byte
 * and 'l' an unsigned 64-bit integer. A table survives that reader unchanged only when its
 * integers were sent with types those versions read like RabbitMQ does.
 */
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

interface AmqplibCodec {
  encodeTable(buffer: Buffer, value: unknown, offset: number): number;
  decodeFields(slice: Buffer): Record<string, unknown>;
}

// The package exports only its entry point; the codec module sits beside it.
const require = createRequire(import.meta.url);
const codec = require(join(dirname(require.resolve('amqplib')), 'lib/codec.js')) as AmqplibCodec;

/** The encoded table: a 4-byte length, then the fields. */
export function encodeTable(table: unknown): Buffer {
  const buffer = Buffer.alloc(64 * 1024);
  const size = codec.encodeTable(buffer, table, 0);
  return Buffer.from(buffer.subarray(0, size));
}

/** amqplib's reading of an encoded table (what a TypeScript consumer sees). */
export function decodeTable(encoded: Buffer): Record<string, unknown> {
  return codec.decodeFields(encoded.subarray(4));
}

export class UnreadableFieldError extends Error {}

/** Reads one encoded table the way py-amqp ≤ 5.3.1 does; throws where it would fail. */
export function readLikeOldPyAmqp(encoded: Buffer): Record<string, unknown> {
  let offset = 0;
  const need = (n: number): void => {
    if (offset + n > encoded.length) throw new UnreadableFieldError(`read past the end at ${offset} (+${n})`);
  };
  const shortString = (): string => {
    need(1);
    const length = encoded.readUInt8(offset);
    offset += 1;
    need(length);
    const text = encoded.toString('utf8', offset, offset + length);
    offset += length;
    return text;
  };
  const item = (): unknown => {
    need(1);
    const tag = String.fromCharCode(encoded.readUInt8(offset));
    offset += 1;
    const fixed = <T>(n: number, read: (at: number) => T): T => {
      need(n);
      const value = read(offset);
      offset += n;
      return value;
    };
    switch (tag) {
      case 'S': {
        const length = fixed(4, (at) => encoded.readUInt32BE(at));
        need(length);
        const text = encoded.toString('utf8', offset, offset + length);
        offset += length;
        return text;
      }
      case 's':
        return shortString();
      case 'b':
        return fixed(1, (at) => encoded.readUInt8(at));
      case 'B':
        return fixed(1, (at) => encoded.readInt8(at));
      case 'U':
        return fixed(2, (at) => encoded.readInt16BE(at));
      case 'u':
        return fixed(2, (at) => encoded.readUInt16BE(at));
      case 'I':
        return fixed(4, (at) => encoded.readInt32BE(at));
      case 'i':
        return fixed(4, (at) => encoded.readUInt32BE(at));
      case 'L':
        return Number(fixed(8, (at) => encoded.readBigInt64BE(at)));
      case 'l':
        return Number(fixed(8, (at) => encoded.readBigUInt64BE(at)));
      case 'd':
        return fixed(8, (at) => encoded.readDoubleBE(at));
      case 't':
        return fixed(1, (at) => encoded.readUInt8(at)) !== 0;
      case 'V':
        return null;
      case 'F':
        return table();
      case 'A': {
        const end = offset + 4 + fixed(4, (at) => encoded.readUInt32BE(at));
        const values: unknown[] = [];
        while (offset < end) values.push(item());
        if (offset !== end) throw new UnreadableFieldError('array length mismatch');
        return values;
      }
      default:
        throw new UnreadableFieldError(`unknown field type ${JSON.stringify(tag)}`);
    }
  };
  const table = (): Record<string, unknown> => {
    const end = offset + 4 + (need(4), encoded.readUInt32BE(offset));
    offset += 4;
    const out: Record<string, unknown> = {};
    while (offset < end) {
      const key = shortString();
      out[key] = item();
    }
    if (offset !== end) throw new UnreadableFieldError('table length mismatch');
    return out;
  };
  return table();
}
