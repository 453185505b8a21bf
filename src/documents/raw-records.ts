/**
 * Records read as their BSON bytes and decoded one at a time, as they are handed on.
 *
 * Without this, taking a batch out of the driver decodes all of it at once: up to 16 MiB of
 * records (16,000 of 1 kB) become objects together and stay alive until the last of them is
 * written. Records that live that long outlast the young generation and are copied into the old
 * one, so on a long download the garbage collector took more of the API's CPU than decoding,
 * rendering and writing together. Decoded one at a time, each record dies young, right after it
 * is rendered. Only the bytes of a batch are held, as the driver holds them anyway. A JSON or
 * NDJSON read goes further: its records are written from their bytes, never decoded (see
 * render/bson-json.ts).
 */
import { BSON, type BSONSerializeOptions, type Document } from 'mongodb';
import { writeBsonJson, type BsonJsonOptions } from '../render/bson-json.js';
import type { BsonRecordReader } from '../render/bson-record.js';

/** Cursor option: the driver hands out each record's bytes (a view into its batch, not a copy). */
export const RAW_RECORDS = { raw: true } as const;

/**
 * The settings the JSON shortcut understands. Any other one that changes decoding (fieldsAsRaw,
 * per-key UTF-8 validation, an offset into the bytes ...) leaves records to the decoder.
 */
const SHORTCUT_SETTINGS: ReadonlySet<string> = new Set([
  'promoteLongs',
  'promoteValues',
  'promoteBuffers',
  'useBigInt64',
  'bsonRegExp',
  'ignoreUndefined',
  'serializeFunctions',
  'checkKeys',
  'enableUtf8Validation',
]);

/**
 * How records of a collection are read, with that collection's BSON settings (the client's
 * `enableUtf8Validation`, `promoteLongs` ...), so a record decodes (or renders as JSON) exactly as
 * the driver would decode it.
 */
export function recordReader(bsonOptions: BSONSerializeOptions): BsonRecordReader<Document> {
  const { enableUtf8Validation, raw: _raw, ...options } = bsonOptions;
  const deserializeOptions: BSON.DeserializeOptions = { ...options, validation: { utf8: enableUtf8Validation !== false } };
  const decode = (bytes: Uint8Array): Document => BSON.deserialize(bytes, deserializeOptions);
  const typed = typedOptions(deserializeOptions);
  const decodeTyped = typed === undefined ? undefined : (bytes: Uint8Array): Document => BSON.deserialize(bytes, typed);
  const jsonOptions = shortcutOptions(bsonOptions, decodeTyped !== undefined);
  return {
    decode,
    ...(decodeTyped === undefined ? {} : { decodeTyped }),
    ...(jsonOptions === undefined ? {} : { writeJson: (bytes, target, offset) => writeBsonJson(bytes, jsonOptions, target, offset) }),
  };
}

/**
 * The settings that decode numbers as their BSON classes (promoteValues off), for the renderers
 * (BsonRecordReader.decodeTyped). Undefined where that would change more than numbers: bigint
 * longs need promotion, and promoted buffers would be Binary again.
 */
function typedOptions(options: BSON.DeserializeOptions): BSON.DeserializeOptions | undefined {
  if (options.useBigInt64 === true || options.promoteBuffers === true) return undefined;
  return { ...options, promoteValues: false };
}

/**
 * undefined when a setting is one the shortcut does not know, or is one the decoder refuses.
 * `typed`: records are rendered from decodeTyped, whose Longs are never numbers.
 */
function shortcutOptions(bsonOptions: BSONSerializeOptions, typed: boolean): BsonJsonOptions | undefined {
  const { fieldsAsRaw, raw: _raw, ...rest } = bsonOptions;
  if (fieldsAsRaw !== undefined && Object.keys(fieldsAsRaw).length > 0) return undefined;
  if (Object.keys(rest).some((name) => !SHORTCUT_SETTINGS.has(name))) return undefined;
  const promoteValues = rest.promoteValues ?? true;
  const promoteLongs = rest.promoteLongs ?? true;
  const useBigInt64 = rest.useBigInt64 ?? false;
  // The decoder refuses bigint without promotion: every record then fails there, as it should.
  if (useBigInt64 && !(promoteValues && promoteLongs)) return undefined;
  return {
    longsAsNumbers: promoteLongs && promoteValues && !useBigInt64 && !typed,
    buffersAsBytes: (rest.promoteBuffers ?? false) && promoteValues,
    validateUtf8: rest.enableUtf8Validation !== false,
    // Without promotion the decoder gives Double objects too, written as doubles.
    typedDoubles: typed || !promoteValues,
  };
}
