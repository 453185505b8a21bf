/**
 * "Ask every API process and gather the answers" under the cluster, without processes: the
 * primary's gatherer and each process's peer over in-memory channels, as over IPC.
 */
import { describe, expect, it } from 'vitest';
import { GatherFailed } from '../../../../src/runtime/cluster/peer.js';
import { memoryCluster, type MemoryProcess } from '../../../support/memory-cluster.js';

describe('gathering an answer from every API process', () => {
  it('gives every asker the answers of all processes, itself included, by topic', async () => {
    const { processes } = memoryCluster(3);
    for (const p of processes) {
      p.peer.answer('id', () => Promise.resolve({ id: p.id }));
      p.peer.answer('twice', () => Promise.resolve(p.id * 2));
    }
    for (const p of processes) {
      const ids = (await p.peer.gather('id')) as { id: number }[];
      expect(ids.map((a) => a.id).sort()).toEqual([1, 2, 3]);
      expect(((await p.peer.gather('twice')) as number[]).sort()).toEqual([2, 4, 6]);
    }
  });

  it('fails when a process answers with an error or knows no such topic', async () => {
    const { processes } = memoryCluster(2);
    const [a, b] = processes as [MemoryProcess, MemoryProcess];
    a.peer.answer('t', () => Promise.resolve(1));
    b.peer.answer('t', () => Promise.reject(new Error('broken here')));
    await expect(a.peer.gather('t')).rejects.toThrow(/API process 2 could not answer: broken here/);
    await expect(a.peer.gather('nobody')).rejects.toBeInstanceOf(GatherFailed);
  });

  it('leaves out a process that ends before answering instead of waiting for it', async () => {
    const { processes, gatherer } = memoryCluster(2, { gatherTimeoutMs: 60_000 });
    const [a, b] = processes as [MemoryProcess, MemoryProcess];
    a.peer.answer('t', () => Promise.resolve('a'));
    b.alive = false;
    const asked = a.peer.gather('t');
    await new Promise((r) => setTimeout(r, 10));
    gatherer.gone(b);
    expect(await asked).toEqual(['a']);
  });

  it('fails in bounded time when a process does not answer', async () => {
    const { processes } = memoryCluster(2, { gatherTimeoutMs: 50 });
    const [a, b] = processes as [MemoryProcess, MemoryProcess];
    a.peer.answer('t', () => Promise.resolve('a'));
    b.peer.answer('t', () => new Promise(() => undefined)); // never answers
    await expect(a.peer.gather('t')).rejects.toThrow('API processes did not answer "t" within 50 ms');
  });

  it('fails in bounded time when the primary does not answer, and at once on close', async () => {
    const { processes } = memoryCluster(1, { askTimeoutMs: 50 });
    const [a] = processes as [MemoryProcess];
    a.alive = false; // its messages no longer reach the primary
    await expect(a.peer.gather('t')).rejects.toThrow('no answer from the primary within 50 ms');
    const pending = a.peer.gather('t');
    a.peer.close();
    await expect(pending).rejects.toThrow('shutting down');
  });
});
