/** The prefetch window: Celery's window plus room for the tasks waiting on their result write, given back lazily. */
import { describe, expect, it } from 'vitest';
import { PrefetchWindow } from '../../../../src/worker/consumer/prefetch-window.js';

/** A channel whose `basic.qos` calls are recorded and answered when `answer()` is called (or at once). */
function fakeChannel(answerAtOnce = true) {
  const frames: string[] = [];
  const waiting: Array<() => void> = [];
  return {
    frames,
    failNext: false,
    answer: (): void => void waiting.shift()?.(),
    prefetch(count: number, global?: boolean): Promise<never> {
      frames.push(`qos ${count}${global ? ' global' : ''}`);
      if (this.failNext) return Promise.reject(new Error('channel closed'));
      if (answerAtOnce) return Promise.resolve() as Promise<never>;
      return new Promise((resolve) => waiting.push(() => resolve(undefined as never)));
    },
  };
}
const turn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** A growable window of 4 (linger 20 ms) that granted room for two result writes: `qos 6` is sent. */
async function windowOfFourWithTwoRoomsTaken(): Promise<{ channel: ReturnType<typeof fakeChannel>; window: PrefetchWindow }> {
  const channel = fakeChannel();
  const window = await PrefetchWindow.open(channel, 4, true, 20);
  channel.frames.length = 0;
  window.takeRoom();
  window.takeRoom();
  await turn();
  return { channel, window };
}

describe('PrefetchWindow', () => {
  it('opens with a channel-wide limit (per consumer unlimited) when it can grow', async () => {
    const channel = fakeChannel();
    const window = await PrefetchWindow.open(channel, 4, true);
    expect(channel.frames).toEqual(['qos 0', 'qos 4 global']);
    expect(window.limit).toBe(4);
  });

  it('keeps the per-consumer limit, fixed, on quorum queues', async () => {
    const channel = fakeChannel();
    const window = await PrefetchWindow.open(channel, 4, false);
    window.takeRoom();
    await turn();
    expect(channel.frames).toEqual(['qos 4']);
    expect(window.limit).toBe(4);
  });

  it('grows by the tasks waiting on their result write, with one update per turn of the event loop', async () => {
    const channel = fakeChannel();
    const window = await PrefetchWindow.open(channel, 4, true);
    channel.frames.length = 0;
    window.takeRoom();
    window.takeRoom();
    window.takeRoom();
    expect(window.limit).toBe(7);
    expect(channel.frames).toEqual([]);
    await turn();
    expect(channel.frames).toEqual(['qos 7 global']);
  });

  it('gives the room back once it was not needed for a whole linger period, and only then', async () => {
    const { channel, window } = await windowOfFourWithTwoRoomsTaken();
    window.giveRoomBack();
    window.giveRoomBack();
    await turn();
    expect(channel.frames).toEqual(['qos 6 global']);
    expect(window.granted).toBe(6);
    await sleep(40);
    expect(channel.frames).toEqual(['qos 6 global', 'qos 4 global']);
    expect(window.limit).toBe(4);
  });

  it('hands the room of a settled message to the next finished task without a basic.qos', async () => {
    const { channel, window } = await windowOfFourWithTwoRoomsTaken();
    for (let i = 0; i < 5; i++) {
      window.giveRoomBack();
      window.takeRoom();
      await sleep(5);
    }
    expect(channel.frames).toEqual(['qos 6 global']);
    window.giveRoomBack();
    window.giveRoomBack();
    await sleep(60);
    expect(channel.frames).toEqual(['qos 6 global', 'qos 4 global']);
  });

  it('comes down to the largest need of the last linger period, not below', async () => {
    const channel = fakeChannel();
    const window = await PrefetchWindow.open(channel, 4, true, 30);
    channel.frames.length = 0;
    for (let i = 0; i < 4; i++) window.takeRoom();
    await turn();
    expect(channel.frames).toEqual(['qos 8 global']);
    // Two writes end; one more starts meanwhile: the period needed at most 7.
    window.giveRoomBack();
    window.giveRoomBack();
    window.takeRoom();
    await sleep(45);
    expect(channel.frames).toEqual(['qos 8 global', 'qos 7 global']);
    // Nothing changes during the next period: it comes down to what is needed now.
    await sleep(45);
    expect(channel.frames).toEqual(['qos 8 global', 'qos 7 global']);
    expect(window.limit).toBe(7);
  });

  it('has one update in flight at a time and then sends the latest limit', async () => {
    const channel = fakeChannel(false);
    const opening = PrefetchWindow.open(channel, 2, true);
    channel.answer();
    await turn();
    channel.answer();
    const window = await opening;
    channel.frames.length = 0;
    window.takeRoom();
    await turn();
    expect(channel.frames).toEqual(['qos 3 global']);
    window.takeRoom();
    window.takeRoom();
    await turn();
    // Still waiting for the broker's answer to the first one.
    expect(channel.frames).toEqual(['qos 3 global']);
    channel.answer();
    await turn();
    await turn();
    expect(channel.frames).toEqual(['qos 3 global', 'qos 5 global']);
  });

  it('never changes an unlimited window', async () => {
    const channel = fakeChannel();
    const window = await PrefetchWindow.open(channel, 0, true);
    window.takeRoom();
    await turn();
    expect(window.limit).toBe(0);
    expect(channel.frames).toEqual(['qos 0', 'qos 0 global']);
  });

  it('sends nothing more once closed or once its channel failed', async () => {
    const channel = fakeChannel();
    const window = await PrefetchWindow.open(channel, 4, true);
    channel.frames.length = 0;
    channel.failNext = true;
    window.takeRoom();
    await turn();
    await turn();
    channel.failNext = false;
    window.takeRoom();
    await turn();
    expect(channel.frames).toEqual(['qos 5 global']);

    const other = await PrefetchWindow.open(channel, 4, true);
    channel.frames.length = 0;
    other.close();
    other.takeRoom();
    await turn();
    expect(channel.frames).toEqual([]);
  });
});
