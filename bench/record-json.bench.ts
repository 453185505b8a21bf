/**
 * Reading a record body (no server): the CPU the records routes spend on a body before the
 * driver's serializer, against JSON.parse of the same bytes, for numbers-heavy bodies from 1 KiB
 * to 16 MiB: parseRecordJson, the Extended JSON revival, and the records of each insert command
 * built as insertBatch builds them (commandRecords: the Longs of the body's int64s, see
 * int64-numbers.ts), one command of about INSERT_COMMAND_BYTES after another, each dropped
 * before the next as the driver drops an answered one. `npm run bench:record-json` runs it with
 * the API's young generation (--max-semi-space-size, src/config/api-memory.ts), on which the cost
 * of the objects a body leaves alive depends. The goal is at most 2× JSON.parse at
 * every size.
 *
 * Bodies (each of about the size named):
 * - int64: an array of 12-digit integers (each one an int64, so a Long per value, made per command);
 * - int32: an array of integers below 2^31;
 * - fractions: an array of measured values (`0.123456`, never whole);
 * - records: objects of an int32, a 13-digit time in milliseconds (int64), a fraction, a whole
 *   double (`3.0`) and a short string;
 * - int64-records: objects mostly of int64s (a 13-digit time, two 12-digit integers, an int32);
 * - int64-record: ONE record holding an array of 12-digit integers (`{"values": [...]}`), up to
 *   12 MiB (a larger size asked for is measured at 12 MiB): at about 13 MiB of text its BSON
 *   passes the 16 MiB a record may have, and the route refuses it;
 * - strings: an array of short strings (no numbers), for comparison.
 * CPU is process.cpuUsage (user + system) over repeated parses of the same text, so that the
 * garbage each parse leaves is counted; the least of five rounds is reported, the rounds sized
 * to parse about 32 MiB each.
 *
 * The `wire` column adds the driver's serialization to both sides: each record of each command
 * serialized as the driver does (one buffer per record, kept with its command; one record
 * whole), against JSON.parse and the serialization of what it read (numbers as doubles and
 * int32s; a bare number as a one-field record). It is the CPU from text to the bytes sent, where
 * the Longs' cost is counted whenever it is paid.
 *
 * Beside them, as ratios to JSON.parse, what making the int64s while reading costs by itself
 * (the way this path no longer takes): JSON.parse, then a bare walk that makes one Long (or one
 * bigint) for each integer beyond int32 of the whole body, all alive at once; no checks, no whole
 * doubles (so the records' Doubles are not counted).
 *
 *   npm run bench:record-json [-- --sizes 1k,1m,16m] [-- --kinds int64,fractions]
 */
import { copyBefore } from '../src/lib/array-copy.js';
import { BSON, Long, type Document } from 'mongodb';
import { commandRecords, recordsPerCommand } from '../src/documents/batch-insert.js';
import { parseJsonBody } from '../src/documents/extended-json.js';
import { int64Numbers } from '../src/documents/int64-numbers.js';
import { parseRecordJson } from '../src/documents/number-literals.js';
import { ResultsRecorder } from './results.js';

const KiB = 1024;
const MiB = 1024 * KiB;
const SIZES = [KiB, 4 * KiB, 16 * KiB, 64 * KiB, 256 * KiB, MiB, 4 * MiB, 16 * MiB];
const ROUND_BYTES = 32 * MiB;
/** The largest int64-record body measured: its BSON (about 16 bytes per 12-digit item) stays below the 16 MiB a record may have. */
const ONE_RECORD_MAX_TEXT = 12 * MiB;
const ROUNDS = 5;

type Kind = 'int64' | 'int32' | 'fractions' | 'records' | 'int64-records' | 'int64-record' | 'strings';
const KINDS: Kind[] = ['int64', 'int32', 'fractions', 'records', 'int64-records', 'int64-record', 'strings'];

function item(kind: Kind, i: number): string {
  switch (kind) {
    case 'int64':
      return String(100_000_000_000 + ((i * 7_919_993) % 899_999_999_999));
    case 'int32':
      return String((i * 7919) % 2_000_000_000);
    case 'fractions':
      return String(((i * 7919) % 100_000) / 1000 + 0.000123);
    case 'records':
      return `{"n":${i},"t":${1_700_000_000_000 + i * 1000},"v":${((i * 7919) % 100_000) / 1000 + 0.000123},"w":${i % 7}.0,"s":"site-${i % 97}"}`;
    case 'int64-records':
      return `{"t":${1_700_000_000_000 + i * 1000},"a":${item('int64', i)},"b":${item('int64', i + 1)},"c":${(i * 7919) % 2_000_000_000}}`;
    case 'int64-record':
    case 'strings':
      return kind === 'strings' ? JSON.stringify(`value-${i}-${'x'.repeat(i % 13)}`) : item('int64', i);
  }
}

/** A JSON array of `kind` items, of about `bytes` characters. */
function body(kind: Kind, bytes: number): string {
  const items: string[] = [];
  let length = 2;
  for (let i = 0; length < bytes; i += 1) {
    const text = item(kind, i);
    items.push(text);
    length += text.length + 1;
  }
  return kind === 'int64-record' ? `{"values":[${items.join(',')}]}` : `[${items.join(',')}]`;
}

/** Milliseconds of CPU per parse: the least over ROUNDS rounds of repeated parses. */
function cpuPerParse(parse: (text: string) => unknown, text: string): number {
  const repeats = Math.max(1, Math.round(ROUND_BYTES / text.length));
  parse(text);
  let best = Infinity;
  for (let round = 0; round < ROUNDS; round += 1) {
    const start = process.cpuUsage();
    for (let i = 0; i < repeats; i += 1) parse(text);
    const used = process.cpuUsage(start);
    best = Math.min(best, (used.user + used.system) / 1000 / repeats);
  }
  return best;
}

const TWO_TO_32 = 2 ** 32;

/**
 * The value with each integer beyond int32 made the driver's int64 (a Long, or a bigint), an
 * array copied from its first changed item on, as the records walk does.
 */
function withInt64s(value: unknown, bigint: boolean): unknown {
  if (typeof value === 'number') return (value | 0) === value || !Number.isInteger(value) ? value : int64(value, bigint);
  if (typeof value !== 'object' || value === null) return value;
  if (Array.isArray(value)) {
    let out: unknown[] | undefined;
    for (let i = 0; i < value.length; i += 1) {
      const item: unknown = value[i];
      const typed = withInt64s(item, bigint);
      if (out !== undefined) out[i] = typed;
      else if (typed !== item) {
        out = copyBefore(value, i);
        out[i] = typed;
      }
    }
    return out ?? value;
  }
  const object = value as Record<string, unknown>;
  for (const key in object) {
    const item = object[key];
    const typed = withInt64s(item, bigint);
    if (typed !== item) object[key] = typed;
  }
  return object;
}

/** A Long or a bigint, from one function, so that the walk's call site sees one function for both. */
const int64 = (wide: number, bigint: boolean): unknown =>
  bigint ? BigInt(wide) : Long.fromBits((wide % TWO_TO_32) | 0, Math.floor(wide / TWO_TO_32) | 0);

function option(name: string): string | undefined {
  const at = process.argv.indexOf(`--${name}`);
  return at < 0 ? undefined : process.argv[at + 1];
}

function parseSize(text: string): number {
  const match = /^(\d+)([km]?)$/i.exec(text.trim());
  if (match === null) throw new Error(`not a size: ${text} (e.g. 64k, 16m)`);
  return Number(match[1]) * (match[2]?.toLowerCase() === 'm' ? MiB : match[2]?.toLowerCase() === 'k' ? KiB : 1);
}

const sizes = option('sizes')?.split(',').map(parseSize) ?? SIZES;
const kinds = (option('kinds')?.split(',') as Kind[] | undefined) ?? KINDS;
const label = (bytes: number): string => (bytes >= MiB ? `${bytes / MiB} MiB` : `${bytes / KiB} KiB`);

/**
 * A body as the records routes take it to the driver: parsed and revived, then (an array) the
 * records of each insert command built and dropped in turn, or (one value) built at once. With
 * `serialize`, each record is also serialized as the driver serializes it (one BSON buffer per
 * record of a command, kept until the command is dropped; a single record whole).
 */
function record(text: string, serialize: boolean): unknown {
  const body = parseJsonBody(parseRecordJson(text));
  if (!Array.isArray(body)) {
    const stored = int64Numbers(body);
    return serialize ? BSON.serialize(stored as Document).length : stored;
  }
  const perCommand = recordsPerCommand(body.length, text.length);
  let from = 0;
  while (from < body.length) {
    const records = commandRecords(body as Document[], from, perCommand);
    if (serialize) serialized(records);
    from += records.length;
  }
  return from;
}

/** Each of `values` serialized as the driver serializes the records of a command (a bare number or Long as a one-field record). */
function serialized(values: readonly unknown[]): Uint8Array[] {
  const buffers = new Array<Uint8Array>(values.length);
  for (let i = 0; i < values.length; i += 1) {
    const value = values[i];
    const record = typeof value === 'object' && value !== null && !('_bsontype' in value);
    buffers[i] = BSON.serialize(record ? (value as Document) : { v: value });
  }
  return buffers;
}

/** JSON.parse and the driver's serialization of what it read (its numbers as doubles and int32s). */
function plainToWire(text: string): unknown {
  const value: unknown = JSON.parse(text);
  return Array.isArray(value) ? serialized(value).length : BSON.serialize(value as Document).length;
}

process.stdout.write(
  'record-json: parseRecordJson + Extended JSON revival + each insert command built (int64Numbers) against JSON.parse of the same text (CPU per body)\n',
);
process.stdout.write('floor: JSON.parse + one Long (or one bigint) per integer beyond int32 of the whole body, as ratios to JSON.parse\n');
process.stdout.write(
  `${'body'.padEnd(10)} ${'size'.padStart(8)} ${'JSON.parse'.padStart(12)} ${'record'.padStart(12)} ${'ratio'.padStart(7)} ${'floor Long'.padStart(10)} ${'bigint'.padStart(7)} ${'wire'.padStart(7)}\n`,
);
const recorder = new ResultsRecorder('record-json', 'npm run bench:record-json');
let worst = 0;
let worstWire = 0;
for (const kind of kinds) {
  for (const asked of sizes) {
    // One record is stored only up to 16 MiB of BSON: 12-digit integers reach it at about 13 MiB of text.
    const size = kind === 'int64-record' ? Math.min(asked, ONE_RECORD_MAX_TEXT) : asked;
    const text = body(kind, size);
    const plain = cpuPerParse((t) => JSON.parse(t), text);
    const typed = cpuPerParse((t) => record(t, false), text);
    const wire = cpuPerParse((t) => record(t, true), text) / cpuPerParse(plainToWire, text);
    const longs = cpuPerParse((t) => withInt64s(JSON.parse(t), false), text);
    const bigints = cpuPerParse((t) => withInt64s(JSON.parse(t), true), text);
    const ratio = typed / plain;
    if (kind !== 'strings') worst = Math.max(worst, ratio);
    if (kind !== 'strings') worstWire = Math.max(worstWire, wire);
    if (size === MiB && kind !== 'strings') {
      recorder.add({
        what: `reading a 1 MiB record body (${kind}), CPU per parse`,
        ours: typed,
        unit: 'ms',
        baseline: 'JSON.parse of the same text',
        baselineValue: plain,
        goal: '≤ 2 (CPU)',
      });
    }
    process.stdout.write(
      `${kind.padEnd(10)} ${label(size).padStart(8)} ${`${plain.toFixed(3)} ms`.padStart(12)} ${`${typed.toFixed(3)} ms`.padStart(12)} ${`x${ratio.toFixed(2)}`.padStart(7)} ${`x${(longs / plain).toFixed(2)}`.padStart(10)} ${`x${(bigints / plain).toFixed(2)}`.padStart(7)} ${`x${wire.toFixed(2)}`.padStart(7)}\n`,
    );
  }
}
process.stdout.write(
  `largest ratio on numbers-heavy bodies: x${worst.toFixed(2)} (goal: at most x2); to the wire: x${worstWire.toFixed(2)}\n`,
);
recorder.save();
