import { describe, expect, it } from 'vitest';
import { TurnGate } from '../../../src/auth/turn-gate.js';

describe('turns at something costly', () => {
  it('lets `capacity` in at once and the rest in arrival order as turns end', async () => {
    const gate = new TurnGate(1, 10_000);
    const order: string[] = [];
    const first = await gate.enter();
    expect(first).toBeTypeOf('function');
    const second = gate.enter().then((end) => (order.push('second'), end));
    const third = gate.enter().then((end) => (order.push('third'), end));
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(order).toEqual([]);
    first?.();
    first?.(); // ending a turn twice ends it once
    (await second)?.();
    (await third)?.();
    expect(order).toEqual(['second', 'third']);
    expect(await gate.enter()).toBeTypeOf('function');
  });

  it('gives no turn to one that waited its longest, and forgets it', async () => {
    const gate = new TurnGate(1, 50);
    const held = await gate.enter();
    const started = Date.now();
    expect(await gate.enter()).toBeUndefined();
    expect(Date.now() - started).toBeGreaterThanOrEqual(45);
    held?.();
    // The one that gave up holds nothing: the next turn comes at once.
    const next = await gate.enter();
    expect(next).toBeTypeOf('function');
  });
});
