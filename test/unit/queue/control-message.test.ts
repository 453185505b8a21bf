import { describe, expect, it } from 'vitest';
import type { Message } from 'amqplib';
import {
  buildControlRequest,
  globToRegExp,
  isAddressedTo,
  parseControlReply,
  parseControlRequest,
  requestHeaders,
} from '../../../src/queue/protocol/control-message.js';

describe('control requests', () => {
  it('builds kombu 5.2.4 request bodies', () => {
    expect(
      buildControlRequest({
        method: 'registered',
        arguments: { taskinfoitems: ['__doc__'] },
        reply: { ticket: 't-1', routingKey: 'oid-1' },
      }),
    ).toEqual({
      method: 'registered',
      arguments: { taskinfoitems: ['__doc__'] },
      destination: null,
      pattern: null,
      matcher: null,
      ticket: 't-1',
      reply_to: { exchange: 'reply.celery.pidbox', routing_key: 'oid-1' },
    });
    const cast = buildControlRequest({ method: 'revoke', arguments: { task_id: 'x' } });
    expect(cast).not.toHaveProperty('ticket');
    expect(cast).not.toHaveProperty('reply_to');
  });

  it('sets clock and expires (epoch seconds) headers', () => {
    expect(requestHeaders(7, 1000, 1_700_000_000_000)).toEqual({ clock: 7, expires: 1_700_000_001 });
    expect(requestHeaders(7, 0)).toEqual({ clock: 7, expires: 0 });
  });

  it('parses what a Python client sends', () => {
    const body = JSON.stringify({
      method: 'ping',
      arguments: {},
      destination: ['celery@a'],
      pattern: null,
      matcher: null,
      ticket: 'tk',
      reply_to: { exchange: 'reply.celery.pidbox', routing_key: 'rk' },
    });
    expect(parseControlRequest(Buffer.from(body))).toEqual({
      method: 'ping',
      arguments: {},
      destination: ['celery@a'],
      pattern: null,
      matcher: null,
      ticket: 'tk',
      reply_to: { exchange: 'reply.celery.pidbox', routing_key: 'rk' },
    });
    expect(parseControlRequest(Buffer.from('not json'))).toBeNull();
    expect(parseControlRequest(Buffer.from('{"arguments": {}}'))).toBeNull();
  });

  it('selects nodes by destination, glob or pcre pattern like kombu', () => {
    const base = buildControlRequest({ method: 'ping' });
    expect(isAddressedTo(base, 'ts@h')).toBe(true);
    expect(isAddressedTo({ ...base, destination: ['ts@h'] }, 'ts@h')).toBe(true);
    expect(isAddressedTo({ ...base, destination: ['other@h'] }, 'ts@h')).toBe(false);
    expect(isAddressedTo({ ...base, pattern: 'ts@*', matcher: 'glob' }, 'ts@h')).toBe(true);
    expect(isAddressedTo({ ...base, pattern: 'py@*', matcher: 'glob' }, 'ts@h')).toBe(false);
    expect(isAddressedTo({ ...base, pattern: 'ts@.', matcher: 'pcre' }, 'ts@h')).toBe(true);
    expect(globToRegExp('a?[!x]*.c').test('ab1zz.c')).toBe(true);
    expect(globToRegExp('a.c').test('abc')).toBe(false);
  });
});

describe('control replies', () => {
  const reply = (body: unknown, headers: Record<string, unknown>) =>
    ({ content: Buffer.from(JSON.stringify(body)), properties: { headers } }) as unknown as Pick<Message, 'content' | 'properties'>;

  it('reads {nodename: value} with the ticket header', () => {
    expect(parseControlReply(reply({ 'celery@py': { ok: 'pong' } }, { ticket: 'tk', clock: 3 }))).toEqual({
      ticket: 'tk',
      nodeName: 'celery@py',
      value: { ok: 'pong' },
    });
  });

  it('rejects bodies that are not a one-key object', () => {
    expect(parseControlReply(reply({ a: 1, b: 2 }, {}))).toBeNull();
    expect(parseControlReply(reply([1], {}))).toBeNull();
  });
});
