import { describe, expect, it } from 'vitest';
import {
  InvalidResultDocumentError,
  decodeResultDocument,
  failureDocument,
  revokedDocument,
  startedDocument,
  successDocument,
  type RequestMeta,
} from '../../../src/queue/results/result-document.js';
import { plainJson } from '../../../src/render/plain-json.js';
import { toPlainValue } from '../../../src/render/plain-value.js';

const ID = '9c7d4a1e-0b2f-4c33-9a52-3b8f4a3e6f11';
const NOW = new Date(Date.UTC(2024, 5, 19, 19, 23, 25, 120));
const META: RequestMeta = {
  name: 'tasks.add',
  args: [2, 2],
  kwargs: {},
  worker: 'ts-worker@host',
  retries: 0,
  queue: 'celery',
};

describe('result documents (written)', () => {
  it('encodes SUCCESS like Celery 5.2.6 plus the result_extended keys', () => {
    expect(successDocument(ID, 4, META, NOW)).toEqual({
      _id: ID,
      status: 'SUCCESS',
      result: '4',
      traceback: null,
      children: [],
      date_done: '2024-06-19T19:23:25.120000',
      name: 'tasks.add',
      args: [2, 2],
      kwargs: {},
      worker: 'ts-worker@host',
      retries: 0,
      queue: 'celery',
    });
  });

  it('stores the result as JSON text, not a BSON value', () => {
    expect(successDocument(ID, 'hi', META, NOW).result).toBe('"hi"');
    expect(successDocument(ID, null, META, NOW).result).toBe('null');
    expect(successDocument(ID, undefined, META, NOW).result).toBe('null');
    expect(successDocument(ID, { a: 1 }, META, NOW).result).toBe('{"a": 1}');
  });

  it('encodes FAILURE as {exc_type, exc_message, exc_module} with the traceback', () => {
    const doc = failureDocument(
      ID,
      { exc_type: 'ZeroDivisionError', exc_message: ['division by zero'], exc_module: 'builtins' },
      'Traceback (most recent call last):\nZeroDivisionError: division by zero\n',
      META,
      NOW,
    );
    expect(doc.status).toBe('FAILURE');
    expect(doc.result).toBe('{"exc_type": "ZeroDivisionError", "exc_message": ["division by zero"], "exc_module": "builtins"}');
    expect(doc.traceback).toContain('ZeroDivisionError');
    expect(doc.date_done).toBe('2024-06-19T19:23:25.120000');
  });

  it('encodes REVOKED as TaskRevokedError with the reason', () => {
    const doc = revokedDocument(ID, 'terminated', META, NOW);
    expect(doc.status).toBe('REVOKED');
    expect(JSON.parse(doc.result)).toEqual({ exc_type: 'TaskRevokedError', exc_message: ['terminated'], exc_module: 'celery.exceptions' });
    expect(doc.traceback).toBeNull();
    expect(doc.date_done).not.toBeNull();
  });

  it('encodes STARTED with pid and hostname and no date_done', () => {
    const doc = startedDocument(ID, { pid: 42, hostname: 'ts-worker@host' }, META, NOW);
    expect(doc.status).toBe('STARTED');
    expect(doc.result).toBe('{"pid": 42, "hostname": "ts-worker@host"}');
    expect(doc.date_done).toBeNull();
  });

  it('adds parent_id and group_id only when set', () => {
    expect(successDocument(ID, 1, META, NOW)).not.toHaveProperty('parent_id');
    const doc = successDocument(ID, 1, { ...META, parentId: 'p', groupId: 'g' }, NOW);
    expect(doc.parent_id).toBe('p');
    expect(doc.group_id).toBe('g');
  });
});

describe('result documents (read)', () => {
  it('reads a Celery 5.2.6 document (string date_done, base keys only)', () => {
    const r = decodeResultDocument({
      _id: ID,
      status: 'SUCCESS',
      result: '4',
      traceback: null,
      children: [],
      date_done: '2024-06-19T19:23:25.120512',
    });
    expect(r).toMatchObject({ taskId: ID, status: 'SUCCESS', result: 4, exception: null, traceback: null, name: null, worker: null });
    expect(r.dateDone?.toISOString()).toBe('2024-06-19T19:23:25.120Z');
  });

  it("keeps a Python float's whole value and a long integer as written, and answers them that way", () => {
    const r = decodeResultDocument({
      _id: ID,
      status: 'SUCCESS',
      result:
        '{"mean": 2.0, "count": 12345678901234567890, "ratio": 0.5, "n": 3, "when": {"__type__": "datetime", "__value__": "2024-01-01T00:00:00+00:00"}}',
      traceback: null,
      children: [],
      date_done: '2024-06-19T19:23:25.120512',
    });
    expect(plainJson(toPlainValue(r.result))).toBe(
      '{"mean":2.0,"count":"12345678901234567890","ratio":0.5,"n":3,"when":"2024-01-01T00:00:00Z"}',
    );
  });

  it('reads a Celery >= 5.3.4 document (BSON Date, extended keys, kombu envelopes in the result)', () => {
    const when = new Date(Date.UTC(2024, 0, 1));
    const r = decodeResultDocument({
      _id: ID,
      status: 'SUCCESS',
      result: '{"at": {"__type__": "datetime", "__value__": "2024-01-01T00:00:00+00:00"}}',
      traceback: null,
      children: [],
      date_done: when,
      name: 'proj.tasks.stamp',
      args: [1],
      kwargs: { a: 2 },
      worker: 'celery@py',
      retries: 1,
      queue: 'celery',
    });
    expect(r.result).toEqual({ at: '2024-01-01T00:00:00Z' });
    expect(r.dateDone).toEqual(when);
    expect(r).toMatchObject({ name: 'proj.tasks.stamp', args: [1], kwargs: { a: 2 }, worker: 'celery@py', retries: 1, queue: 'celery' });
  });

  it('exposes the exception of a FAILURE', () => {
    const r = decodeResultDocument(
      failureDocument(ID, { exc_type: 'ValueError', exc_message: ['bad'], exc_module: 'builtins' }, 'tb', META, NOW) as never,
    );
    expect(r.status).toBe('FAILURE');
    expect(r.exception).toEqual({ exc_type: 'ValueError', exc_message: ['bad'], exc_module: 'builtins' });
    expect(r.traceback).toBe('tb');
  });

  it("takes a state of the task's own as running, with its meta as the result", () => {
    const decoded = decodeResultDocument({ _id: ID, status: 'PROGRESS', result: '{"current": 1, "total": 4}' });
    expect(decoded).toMatchObject({ status: 'STARTED', customState: 'PROGRESS', result: { current: 1, total: 4 } });
  });

  it('refuses states that are not names, and non-JSON results', () => {
    for (const status of ['', 'two words', 42, null, 'x'.repeat(65)]) {
      expect(() => decodeResultDocument({ _id: ID, status, result: '1' })).toThrow(InvalidResultDocumentError);
    }
    expect(() => decodeResultDocument({ _id: ID, status: 'SUCCESS', result: 'not json' })).toThrow(InvalidResultDocumentError);
  });

  it('accepts native results (result_serializer = "bson")', () => {
    expect(
      decodeResultDocument({ _id: ID, status: 'SUCCESS', result: { a: 1 }, traceback: null, children: [], date_done: null }).result,
    ).toEqual({ a: 1 });
  });
});
