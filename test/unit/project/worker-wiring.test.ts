import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

// The Worker class wires the worker's parts together (consumer, strategy, request, start checks,
// runner, outcome flow, mingle, heart) and does none of their work itself: when it did, it grew
// to 1,100 lines that no unit test could reach, because it also made its own connections. A
// Worker file past 300 lines is the sign that work has crept back in; it belongs in a module
// of its own, with its own unit test.

describe('the Worker keeps the wiring only', () => {
  const source = readFileSync('src/worker/worker.ts', 'utf8');

  it('stays within 300 lines', () => {
    expect(source.split('\n').length).toBeLessThanOrEqual(300);
  });

  it('is given its broker session, database and publisher, and makes none of them itself', () => {
    expect(source).not.toMatch(/new BrokerSession\b|connectMongo\b|new MongoClient\b|new TaskPublisher\b/);
  });
});
