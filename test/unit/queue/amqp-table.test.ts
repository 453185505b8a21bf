/**
 * Every integer the service and the TypeScript worker put in a header or a queue argument is
 * encoded with a type that every released py-amqp reads as the same number: checked on the
 * bytes amqplib writes, and by reading them back the way py-amqp ≤ 5.3.1 does.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { fieldTable, numberField } from '../../../src/queue/protocol/amqp-table.js';
import { controlPublishOptions, requestHeaders } from '../../../src/queue/protocol/control-message.js';
import { PIDBOX_QUEUE_OPTIONS } from '../../../src/queue/protocol/entities.js';
import { eventPublishOptions } from '../../../src/queue/protocol/events.js';
import { buildTaskMessage, taskPublishOptions } from '../../../src/queue/protocol/task-message.js';
import { encodeSubmitterAccess } from '../../../src/queue/protocol/submitter-access.js';
import { decodeTable, encodeTable, readLikeOldPyAmqp } from './amqp-wire.js';

/** The bytes of a one-field table `{clock: n}` after the 4-byte table length. */
const clockField = (headers: unknown): Buffer => encodeTable(headers).subarray(4);

describe('field-table numbers', () => {
  it('sends a clock of 200 as a signed 32-bit integer (I), not a 16-bit short (s)', () => {
    const bytes = clockField(controlPublishOptions({ clock: 200 }).headers);
    expect([...bytes]).toEqual([5, ...Buffer.from('clock'), 'I'.charCodeAt(0), 0, 0, 0, 200]);
    // amqplib left to itself picks 's', which py-amqp up to 5.3.1 reads as a short string.
    expect(String.fromCharCode(clockField({ clock: 200 })[6] ?? 0)).toBe('s');
  });

  it.each([
    [0, 'I'],
    [-1, 'I'],
    [127, 'I'],
    [128, 'I'],
    [32_767, 'I'],
    [32_768, 'I'],
    [-32_769, 'I'],
    [2 ** 31 - 1, 'I'],
    [-(2 ** 31), 'I'],
    [2 ** 31, 'l'],
    [2 ** 40, 'l'],
    [Number.MAX_SAFE_INTEGER, 'l'],
    [-(2 ** 31) - 1, 'd'],
    [1.5, 'd'],
    [1_700_000_000.123, 'd'],
  ])('encodes %d with type %s', (n, tag) => {
    const encoded = encodeTable(fieldTable({ n }));
    expect(String.fromCharCode(encoded[6] ?? 0)).toBe(tag);
    expect(readLikeOldPyAmqp(encoded)).toEqual({ n });
    expect(decodeTable(encoded)).toEqual({ n });
  });

  it('reads back unchanged by old py-amqp and by amqplib, for any JSON-like table', () => {
    const value = fc.letrec((tie) => ({
      leaf: fc.oneof(
        fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 }),
        fc.maxSafeNat(),
        fc.double({ noNaN: true, noDefaultInfinity: true }),
        fc.string(),
        fc.boolean(),
        fc.constant(null),
      ),
      node: fc.oneof(
        { depthSize: 'small' },
        tie('leaf'),
        fc.array(tie('node'), { maxLength: 4 }),
        fc.dictionary(
          fc.string({ minLength: 1, maxLength: 8 }).filter((k) => k !== '!' && k !== '__proto__'),
          tie('node'),
          { maxKeys: 4 },
        ),
      ),
    }));
    const table = fc.dictionary(
      fc.string({ minLength: 1, maxLength: 8 }).filter((k) => k !== '__proto__'),
      value.node,
      { maxKeys: 6 },
    );
    fc.assert(
      fc.property(table, (t) => {
        const encoded = encodeTable(fieldTable(t));
        // -0 has no integer encoding; it comes back as 0 like from Python.
        const normal = JSON.parse(JSON.stringify(t)) as unknown;
        expect(readLikeOldPyAmqp(encoded)).toEqual(normal);
        expect(decodeTable(encoded)).toEqual(normal);
      }),
    );
  });

  it('leaves strings, booleans, null, buffers and explicitly typed values as they are', () => {
    const buffer = Buffer.from('x');
    expect(fieldTable({ s: 'a', t: true, v: null, x: buffer, ts: { '!': 'timestamp', value: 1 }, u: undefined })).toEqual({
      s: 'a',
      t: true,
      v: null,
      x: buffer,
      ts: { '!': 'timestamp', value: 1 },
    });
    expect(numberField(7)).toEqual({ '!': 'int', value: 7 });
  });
});

describe('what the service and the worker send', () => {
  it('control requests and replies: clock and expires are readable by old py-amqp at any clock', () => {
    for (const clock of [1, 128, 200, 32_767, 32_768, 40_000, 2 ** 31 + 5]) {
      const request = encodeTable(controlPublishOptions(requestHeaders(clock, 1000, 1_700_000_000_000)).headers);
      expect(readLikeOldPyAmqp(request)).toEqual({ clock, expires: 1_700_000_001 });
      const reply = encodeTable(controlPublishOptions({ clock, ticket: 'abc' }).headers);
      expect(readLikeOldPyAmqp(reply)).toEqual({ clock, ticket: 'abc' });
    }
  });

  it('task headers: retries, group_index, time limits and nested custom headers', () => {
    const message = buildTaskMessage({
      taskName: 'tasks.add',
      retries: 200,
      groupIndex: 40_000,
      timeLimit: { hard: 300, soft: -1 },
      authenticatedUser: 'bob',
      extraHeaders: {
        ...encodeSubmitterAccess({ username: 'bob', isSuperuser: false, dataStorePermissions: ['data_store.x.y.view'] }),
        nested: { a: [1, 300, 70_000] },
      },
    });
    const encoded = encodeTable(taskPublishOptions(message).headers);
    const read = readLikeOldPyAmqp(encoded);
    expect(read).toEqual(JSON.parse(JSON.stringify(message.headers)));
    expect(read).toMatchObject({ retries: 200, group_index: 40_000, timelimit: [300, -1], nested: { a: [1, 300, 70_000] } });
    expect(encoded.includes(Buffer.from('retriesI'))).toBe(true);
  });

  it('event headers and pidbox queue arguments', () => {
    expect(readLikeOldPyAmqp(encodeTable(eventPublishOptions('ts@host').headers))).toEqual({ hostname: 'ts@host' });
    const args = encodeTable(PIDBOX_QUEUE_OPTIONS.arguments);
    expect(readLikeOldPyAmqp(args)).toEqual({ 'x-expires': 10_000, 'x-message-ttl': 300_000 });
    // 10 000 is a short to amqplib; kombu declares it as 'I', and so do we.
    expect(args.includes(Buffer.from('x-expiresI'))).toBe(true);
  });
});
