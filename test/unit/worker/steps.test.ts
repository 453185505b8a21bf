import { describe, expect, it } from 'vitest';
import { Steps, type Step } from '../../../src/worker/steps.js';

function recording(names: string[], log: string[], failing: { start?: string; stop?: string } = {}): Step[] {
  return names.map((name) => ({
    name,
    async start() {
      await Promise.resolve();
      if (failing.start === name) throw new Error(`${name} cannot start`);
      log.push(`start ${name}`);
    },
    stop() {
      if (failing.stop === name) throw new Error(`${name} cannot stop`);
      log.push(`stop ${name}`);
    },
  }));
}

describe('the worker steps', () => {
  it('start in order and stop in reverse', async () => {
    const log: string[] = [];
    const steps = new Steps(recording(['a', 'b', 'c'], log), () => undefined);
    await steps.start();
    await steps.stop();
    expect(log).toEqual(['start a', 'start b', 'start c', 'stop c', 'stop b', 'stop a']);
  });

  it('each stop runs on its own: a failing one is reported and the rest still stop', async () => {
    const log: string[] = [];
    const failed: string[] = [];
    const steps = new Steps(recording(['a', 'b', 'c'], log, { stop: 'b' }), (name, error) =>
      failed.push(`${name}: ${(error as Error).message}`),
    );
    await steps.stop();
    expect(log).toEqual(['stop c', 'stop a']);
    expect(failed).toEqual(['b: b cannot stop']);
  });

  it('stop starting once told to, and a start that fails ends the start', async () => {
    const log: string[] = [];
    let stopped = false;
    const steps = new Steps(
      [...recording(['a'], log), { name: 'halt', start: () => void (stopped = true), stop: () => undefined }, ...recording(['b'], log)],
      () => undefined,
    );
    await steps.start(() => stopped);
    expect(log).toEqual(['start a']);
    const failing = new Steps(recording(['a', 'b', 'c'], log, { start: 'b' }), () => undefined);
    await expect(failing.start()).rejects.toThrow('b cannot start');
    expect(log).toEqual(['start a', 'start a']);
  });
});
