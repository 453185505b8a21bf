/**
 * A loopback TCP relay in front of a real service, so a test can cut every connection and
 * refuse new ones for a while: what clients see when RabbitMQ or the database restarts. TLS
 * passes through untouched (the certificate is for `localhost`, which the relay also is).
 */
import { createServer, connect, type Server, type Socket } from 'node:net';

export class TcpProxy {
  private readonly server: Server;
  private readonly sockets = new Set<Socket>();
  private refusingUntil = 0;
  port = 0;

  constructor(private readonly targetPort: number) {
    this.server = createServer((client) => {
      if (Date.now() < this.refusingUntil) {
        client.destroy();
        return;
      }
      const upstream = connect(this.targetPort, '127.0.0.1');
      for (const [a, b] of [[client, upstream], [upstream, client]] as const) {
        this.sockets.add(a);
        a.on('error', () => b.destroy());
        a.on('close', () => {
          this.sockets.delete(a);
          b.destroy();
        });
        a.pipe(b);
      }
    });
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
    for (const socket of this.sockets) socket.destroy();
  }

  get openConnections(): number {
    return this.sockets.size / 2;
  }

  async close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

/** The same URL with another port. */
export function withPort(url: string, port: number): string {
  const parsed = new URL(url);
  parsed.port = String(port);
  return parsed.toString();
}
