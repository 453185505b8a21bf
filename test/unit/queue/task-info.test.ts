/** The cybercom_task_info reply: reading workers' answers, writing the TS worker's, Python's signature notation. */
import { describe, expect, it } from 'vitest';
import { isAddressedTo, type ControlRequest } from '../../../src/queue/protocol/control-message.js';
import { formatTaskInfoReply, parseTaskInfoReply, signatureText, type TaskParameter } from '../../../src/queue/protocol/task-info.js';
import { excludingPattern, TaskInfoRefusals } from '../../../src/queue/api/task-info-refusals.js';

describe('parseTaskInfoReply', () => {
  it('reads the extension’s reply, a repr default marked as such', () => {
    const reply = parseTaskInfoReply({
      version: 1,
      tasks: {
        'proj.add': {
          doc: 'Add.',
          signature: {
            text: '(x, when=datetime.date(2024, 1, 2), *, scale: float = 1.0)',
            parameters: [
              { name: 'x', kind: 'positional_or_keyword' },
              { name: 'when', kind: 'positional_or_keyword', default_repr: 'datetime.date(2024, 1, 2)' },
              { name: 'scale', kind: 'keyword_only', default: 1.0, annotation: 'float' },
            ],
          },
        },
      },
    });
    expect(reply.kind).toBe('tasks');
    if (reply.kind !== 'tasks') return;
    expect(reply.tasks.get('proj.add')?.signature?.parameters).toEqual([
      { name: 'x', kind: 'positional_or_keyword' },
      { name: 'when', kind: 'positional_or_keyword', default: 'datetime.date(2024, 1, 2)', defaultIsRepr: true },
      { name: 'scale', kind: 'keyword_only', default: 1, annotation: 'float' },
    ]);
  });

  it('tells a refusal (unknown command) from a reply it cannot read, and drops malformed tasks only', () => {
    expect(parseTaskInfoReply({ error: "KeyError('cybercom_task_info')" })).toEqual({ kind: 'refused' });
    expect(parseTaskInfoReply({ version: 2, tasks: {} })).toEqual({ kind: 'unreadable' });
    expect(parseTaskInfoReply(['x'])).toEqual({ kind: 'unreadable' });
    expect(parseTaskInfoReply(null)).toEqual({ kind: 'unreadable' });
    const reply = parseTaskInfoReply({
      version: 1,
      tasks: {
        good: { doc: null, signature: null },
        badKind: { doc: null, signature: { text: '()', parameters: [{ name: 'x', kind: 'positional' }] } },
        noDoc: { signature: null },
      },
    });
    expect(reply.kind === 'tasks' && [...reply.tasks.keys()]).toEqual(['good']);
  });

  it('reads back what the TS worker writes', () => {
    const parameters: TaskParameter[] = [{ name: 'x', kind: 'positional_only', default: [1, 'a'], annotation: 'number[]' }];
    const written = formatTaskInfoReply([{ name: 't', doc: 'Doc.', signature: { text: signatureText(parameters), parameters } }]);
    expect(written).toEqual({
      version: 1,
      tasks: {
        t: {
          doc: 'Doc.',
          signature: {
            text: '(x: number[] = [1,"a"], /)',
            parameters: [{ name: 'x', kind: 'positional_only', default: [1, 'a'], annotation: 'number[]' }],
          },
        },
      },
    });
    const read = parseTaskInfoReply(JSON.parse(JSON.stringify(written)));
    expect(read.kind === 'tasks' && read.tasks.get('t')).toEqual({
      doc: 'Doc.',
      signature: { text: '(x: number[] = [1,"a"], /)', parameters },
    });
  });
});

describe('signatureText', () => {
  it('writes Python’s notation: "/" after positional-only, a bare "*" before keyword-only', () => {
    expect(signatureText([])).toBe('()');
    expect(
      signatureText([
        { name: 'a', kind: 'positional_only' },
        { name: 'b', kind: 'positional_or_keyword', default: 1 },
        { name: 'c', kind: 'keyword_only', annotation: 'string' },
        { name: 'd', kind: 'keyword_only', default: 'x', annotation: 'string' },
        { name: 'rest', kind: 'var_keyword' },
      ]),
    ).toBe('(a, /, b=1, *, c: string, d: string = "x", **rest)');
    expect(
      signatureText([
        { name: 'args', kind: 'var_positional' },
        { name: 'k', kind: 'keyword_only' },
      ]),
    ).toBe('(*args, k)');
  });
});

describe('leaving refusing workers out', () => {
  const request = (pattern: string): ControlRequest =>
    ({ method: 'cybercom_task_info', arguments: {}, destination: null, pattern, matcher: 'pcre' }) as ControlRequest;

  it('matches every node name but the excluded ones, with regex characters taken literally', () => {
    const pattern = excludingPattern(['old.1@h', 'a+b@h']);
    expect(isAddressedTo(request(pattern), 'old.1@h')).toBe(false);
    expect(isAddressedTo(request(pattern), 'a+b@h')).toBe(false);
    expect(isAddressedTo(request(pattern), 'oldx1@h')).toBe(true);
    expect(isAddressedTo(request(pattern), 'old.1@host')).toBe(true);
    expect(isAddressedTo(request(pattern), 'new@h')).toBe(true);
  });

  it('believes a refusal for a while, then asks again; an answer clears it', () => {
    let now = 0;
    const refusals = new TaskInfoRefusals(1_000, () => now);
    expect(refusals.addressing()).toEqual({});
    refusals.note({ 'a@h': { kind: 'refused' }, 'b@h': { kind: 'refused' }, 'c@h': { kind: 'unreadable' } });
    expect(refusals.addressing()).toEqual({ pattern: '(?!(?:a@h|b@h)$)', matcher: 'pcre' });
    refusals.note({ 'b@h': { kind: 'tasks', tasks: new Map() } });
    expect(refusals.addressing()).toEqual({ pattern: '(?!(?:a@h)$)', matcher: 'pcre' });
    now = 1_000;
    expect(refusals.addressing()).toEqual({});
  });
});
