/**
 * Records read as their BSON bytes and decoded one at a time, as they are handed on.
 *
 * Without this, taking a batch out of the driver decodes all of it at once: up to 16 MiB of
 * records (16,000 of 1 kB) become objects together and stay alive until the last of them is
 * written. Records that live that long outlast the young generation and are copied into the old
 * one, so on a long download the garbage collector took more of the API's CPU than decoding,
 * rendering and writing together. Decoded one at a time, each record dies young, right after it
 * is rendered. Only the bytes of a batch are held, as the driver holds them anyway.
 */
import { BSON, type BSONSerializeOptions, type Document } from 'mongodb';

/** Turns one record's BSON bytes into the document the driver itself would have handed out. */
export type RecordDecoder = (bytes: Uint8Array) => Document;

/** Cursor option: the driver hands out each record's bytes (a view into its batch, not a copy). */
export const RAW_RECORDS = { raw: true } as const;

/**
 * The decoder for records of a collection, with that collection's BSON settings (the client's
 * `enableUtf8Validation`, `promoteLongs` ...), so a record decodes exactly as the driver would
 * decode it.
 */
export function recordDecoder(bsonOptions: BSONSerializeOptions): RecordDecoder {
  const { enableUtf8Validation, raw: _raw, ...options } = bsonOptions;
  const deserializeOptions: BSON.DeserializeOptions = { ...options, validation: { utf8: enableUtf8Validation !== false } };
  return (bytes) => BSON.deserialize(bytes, deserializeOptions);
}
