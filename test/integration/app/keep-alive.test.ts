/**
 * An idle keep-alive connection stays open longer than clients keep one (httpx: 5 s), so the next
 * request on it is answered rather than met by a connection the server has just closed (a reset
 * for the client, and a lost POST). Real HTTP server.
 */
import { once } from 'node:events';
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../support/app.js';

let app: TestApp;

beforeAll(async () => {
  app = await startTestApp();
});

afterAll(async () => {
  await app?.close();
});

/** Sends one keep-alive request on `socket` and resolves with the status of its answer. */
async function ask(socket: net.Socket, host: string): Promise<number> {
  let received = '';
  const answered = new Promise<number>((resolve, reject) => {
    const onData = (chunk: Buffer): void => {
      received += chunk.toString('latin1');
      const head = received.indexOf('\r\n\r\n');
      const length = Number(/\r\ncontent-length: (\d+)/i.exec(received)?.[1] ?? -1);
      if (head >= 0 && length >= 0 && received.length >= head + 4 + length) {
        socket.off('data', onData);
        socket.off('close', onClose);
        resolve(Number(received.slice(9, 12)));
      }
    };
    const onClose = (): void => reject(new Error('the server closed the connection'));
    socket.on('data', onData);
    socket.once('close', onClose);
  });
  socket.write(`GET /api/health/ HTTP/1.1\r\nhost: ${host}\r\naccept: application/json\r\nconnection: keep-alive\r\n\r\n`);
  return answered;
}

describe('an idle keep-alive connection', () => {
  it('is still answered after 6 s of silence (longer than Node’s default and httpx’s 5 s)', async () => {
    const { hostname, port } = new URL(app.url);
    const socket = net.connect(Number(port), hostname);
    await once(socket, 'connect');
    try {
      expect(await ask(socket, `${hostname}:${port}`)).toBe(200);
      await new Promise((r) => setTimeout(r, 6_000));
      expect(socket.destroyed, 'the server closed the idle connection').toBe(false);
      expect(await ask(socket, `${hostname}:${port}`)).toBe(200);
    } finally {
      socket.destroy();
    }
  });
});
