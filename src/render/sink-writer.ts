import type { ResponseSink } from './types.js';

/** Raised when the client disconnects while a stream waits for the socket to drain. */
export class ResponseClosedError extends Error {
  constructor() {
    super('the client closed the connection before the response was complete');
    this.name = 'ResponseClosedError';
  }
}

/**
 * Batches small pieces into chunks of about `chunkSize` characters before writing them (one
 * write per record would cost a syscall and a chunk header each), and honours backpressure:
 * after `write` returns false nothing more is written until 'drain'. Memory stays bounded by one
 * chunk plus one piece, whatever the number of pieces.
 *
 * Nothing touches the sink before the first chunk is flushed, so a failure that happens early
 * (typically the first cursor batch) leaves the response untouched for a proper error reply.
 */
export class SinkWriter {
  private pending: string[] = [];
  private pendingLength = 0;
  private started = false;
  private closed = false;
  private onClose: (() => void) | null = null;

  constructor(
    private readonly sink: ResponseSink,
    /** Called once, right before the first byte goes out (status line and headers). */
    private readonly start: () => void,
    private readonly chunkSize = 64 * 1024,
  ) {}

  /** Whether anything has been handed to the sink yet. */
  get hasStarted(): boolean {
    return this.started;
  }

  async push(piece: string): Promise<void> {
    if (this.add(piece)) await this.flush();
  }

  /**
   * Adds a piece without writing; true when a chunk is full and `flush` is due. Lets a caller
   * that writes many pieces await only once a chunk, not once a piece.
   */
  add(piece: string): boolean {
    this.pending.push(piece);
    this.pendingLength += piece.length;
    return this.pendingLength >= this.chunkSize;
  }

  /** Writes what is pending and waits for 'drain' if the sink asks for it. */
  async flush(): Promise<void> {
    if (this.pendingLength === 0) return;
    const chunk = this.takePending();
    this.begin();
    if (this.closed || this.sink.destroyed === true) throw new ResponseClosedError();
    if (!this.sink.write(chunk)) await this.drained();
  }

  /** Writes what is pending and ends the response. */
  end(): void {
    const chunk = this.takePending();
    this.begin();
    this.sink.end(chunk.length > 0 ? chunk : undefined);
  }

  /** Removes and returns what is pending (used when a stream is abandoned). */
  takePending(): string {
    const chunk = this.pending.join('');
    this.pending = [];
    this.pendingLength = 0;
    return chunk;
  }

  private begin(): void {
    if (this.started) return;
    this.started = true;
    this.start();
    // One 'close' listener for the whole response (not one per drain wait, which would pile up
    // listeners on a long stream): a client that goes away never sends 'drain'.
    this.sink.once('close', () => {
      this.closed = true;
      this.onClose?.();
    });
  }

  private drained(): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      if (this.closed) {
        reject(new ResponseClosedError());
        return;
      }
      this.onClose = () => reject(new ResponseClosedError());
      this.sink.once('drain', () => {
        this.onClose = null;
        resolve();
      });
    });
  }
}
