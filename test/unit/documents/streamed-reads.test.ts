import { describe, expect, it } from 'vitest';
import { isStreamedRead, StreamedReadLimiter } from '../../../src/documents/streamed-reads.js';
import { apiError as refusal } from './api-error.js';

describe('streamed reads', () => {
  it('are whole results (page_size=0) and pages larger than one batch; ordinary pages are not', () => {
    expect(isStreamedRead(0)).toBe(true);
    expect(isStreamedRead(10_001)).toBe(true);
    expect(isStreamedRead(Number.MAX_SAFE_INTEGER)).toBe(true);
    expect(isStreamedRead(10)).toBe(false);
    expect(isStreamedRead(10_000)).toBe(false);
  });

  it('a caller may stream perCaller at a time; beyond that 429 with Retry-After and the JSON error body', () => {
    const limiter = new StreamedReadLimiter(2);
    limiter.acquire('user:a');
    const release = limiter.acquire('user:a');
    const err = refusal(() => limiter.acquire('user:a'));
    expect(err).toMatchObject({ status: 429, code: 'too_many_streamed_reads' });
    expect(Number(err.headers['Retry-After'])).toBeGreaterThan(0);
    expect(err.toBody().error).toMatchObject({ status: 429, code: 'too_many_streamed_reads', detail: { limit: 2 } });
    // Other callers have shares of their own.
    expect(() => limiter.acquire('user:b')).not.toThrow();
    expect(() => limiter.acquire('ip:10.0.0.1')).not.toThrow();
    // A finished stream frees its slot, once.
    release();
    release();
    expect(limiter.inUse('user:a')).toBe(1);
    expect(() => limiter.acquire('user:a')).not.toThrow();
    expect(limiter.inUse()).toBe(4);
  });
});
