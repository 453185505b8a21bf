import { describe, expect, it } from 'vitest';
import { truncatedRepr, unstorableOutcome } from '../../../../src/worker/request/unstorable-result.js';

describe('an outcome the database refuses for good', () => {
  it('keeps enough of a long repr to recognise it, and says how long it was', () => {
    expect(truncatedRepr('short')).toBe('short');
    expect(truncatedRepr('x'.repeat(12), 5)).toBe('xxxxx... (12 characters in all)');
  });

  it("is stored as kombu's EncodeError naming what was refused and a piece of it", () => {
    const info = unstorableOutcome(new Error('document too large'), 'result', `'${'y'.repeat(2_000)}'`);
    expect([info.exc_type, info.exc_module]).toEqual(['EncodeError', 'kombu.exceptions']);
    const message = String(info.exc_message[0]);
    expect(message).toMatch(/^the task's result could not be stored \(/);
    expect(message).toContain('(2002 characters in all)');
    expect(message.length).toBeLessThan(1_300);
  });
});
