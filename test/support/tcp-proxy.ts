/**
 * A loopback TCP relay in front of a real service, so a test can cut every connection and
 * refuse new ones for a while: what clients see when RabbitMQ or the database restarts. TLS
 * passes through untouched (the certificate is for `localhost`, which the relay also is).
 */
import { createServer, connect, type Server, type Socket } from 'node:net';

export class TcpProxy {
  private readonly server: Server;
  private readonly sockets = new Set<Socket>();
  /** Connections accepted while frozen: held open, never relayed. */
  private readonly held = new Set<Socket>();
  private refusingUntil = 0;
  private frozen = false;
  port = 0;

  constructor(private readonly targetPort: number) {
    this.server = createServer((client) => {
      if (Date.now() < this.refusingUntil) {
        client.destroy();
        return;
      }
      if (this.frozen) {
        // Accepted and never answered, as by a host that stopped responding.
        this.held.add(client);
        client.on('error', () => undefined);
        client.on('close', () => this.held.delete(client));
        return;
      }
      const upstream = connect(this.targetPort, '127.0.0.1');
      for (const [a, b] of [
        [client, upstream],
        [upstream, client],
      ] as const) {
        this.sockets.add(a);
        a.on('error', () => b.destroy());
        a.on('close', () => {
          this.sockets.delete(a);
          b.destroy();
        });
        if (a === client) {
          a.on('data', (chunk: Buffer) => {
            const drop = this.drop;
            if (drop !== undefined && drop.replyOn === undefined && drop.sent + chunk.length > drop.afterClientBytes) {
              if (drop.when === 'request') {
                // Forward part of the request, then cut: the server sees a truncated message.
                this.drop = undefined;
                upstream.write(chunk.subarray(0, Math.max(0, drop.afterClientBytes - drop.sent)), () =>
                  this.destroyPair(client, upstream, drop.refuseMs),
                );
                return;
              }
              // The whole request goes through; its answer is lost.
              drop.replyOn = upstream;
            }
            if (drop !== undefined) drop.sent += chunk.length;
            if (!this.frozen) upstream.write(chunk);
          });
        } else {
          a.on('data', (chunk: Buffer) => {
            const drop = this.drop;
            if (drop?.replyOn === upstream) {
              // The server answered the request that went past the mark: lose the answer.
              this.drop = undefined;
              this.destroyPair(client, upstream, drop.refuseMs);
              return;
            }
            if (!this.frozen) client.write(chunk);
          });
        }
      }
    });
  }

  private drop:
    | {
        when: 'request' | 'reply';
        afterClientBytes: number;
        refuseMs: number;
        /** Bytes clients sent since the cut was armed, over all connections. */
        sent: number;
        /** The connection whose next answer is lost (`reply`, once the mark is passed). */
        replyOn?: Socket;
      }
    | undefined;

  private destroyPair(client: Socket, upstream: Socket, refuseMs: number): void {
    if (refuseMs > 0) this.cut(refuseMs);
    client.destroy();
    upstream.destroy();
  }

  /**
   * Arms a one-time cut of the connection on which clients, counting from now over all
   * connections, send their byte number `afterClientBytes + 1`: `request` cuts in the middle of
   * that request (the server never gets all of it), `reply` lets the request through and cuts
   * when the server answers it (the server did the work, the client never hears of it). Counted
   * from the arming, a mark can fall in a later message of a connection already in use (the
   * second of several commands). Other connections and later ones are untouched, unless
   * `refuseMs` asks for every connection to be cut and new ones refused from then on, for that long.
   */
  dropOnce(when: 'request' | 'reply', afterClientBytes: number, refuseMs = 0): void {
    this.drop = { when, afterClientBytes, refuseMs, sent: 0 };
  }

  async start(): Promise<this> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    const address = this.server.address();
    if (address === null || typeof address === 'string') throw new Error('proxy has no port');
    this.port = address.port;
    return this;
  }

  /** Drops every open connection and refuses new ones for `refuseMs`. */
  cut(refuseMs: number): void {
    this.refusingUntil = Date.now() + refuseMs;
    for (const socket of [...this.sockets, ...this.held]) socket.destroy();
  }

  /**
   * Keeps every connection open but passes nothing either way, and accepts new connections
   * without ever answering: a service that stopped responding without closing its sockets (a
   * paused process, a host that vanished, a partition). Only the clients' own timeouts end it.
   */
  freeze(): void {
    this.frozen = true;
  }

  get openConnections(): number {
    return this.sockets.size / 2;
  }

  async close(): Promise<void> {
    for (const socket of [...this.sockets, ...this.held]) socket.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

/** The same URL with another port. */
export function withPort(url: string, port: number): string {
  const parsed = new URL(url);
  parsed.port = String(port);
  return parsed.toString();
}
