import type { ResponseSink } from './types.js';

/** Raised when the client disconnects while a stream waits for the socket to drain. */
export class ResponseClosedError extends Error {
  constructor(message = 'the client closed the connection before the response was complete') {
    super(message);
    this.name = 'ResponseClosedError';
  }
}

/**
 * Raised when the client stopped reading: nothing more of the response was taken for the send
 * timeout. The connection has been cut by then.
 */
export class ResponseStalledError extends ResponseClosedError {
  constructor(timeoutMs: number) {
    super(`the client took nothing more of the response for ${timeoutMs / 1000} s; the response was aborted`);
    this.name = 'ResponseStalledError';
  }
}

/** Bytes of UTF-8 per UTF-16 code unit, at most (a lone surrogate is written as 3 bytes). */
const MAX_UTF8_PER_UNIT = 3;
/**
 * Room in a chunk beyond the size that makes it due, so the piece that fills it still fits
 * (a record reserves several times its size, see addBytes). Kept small: chunks of 128 KiB and
 * more are allocated by mmap, one system call pair each.
 */
const CHUNK_HEADROOM = 32 * 1024;
/**
 * The first chunk of a response: most answers are small, and this size comes from Node's shared
 * buffer pool instead of an allocation of its own. A long stream moves on to full-size chunks.
 */
const FIRST_CHUNK = 4000;
/** Chunks the sink has finished with, kept for the chunks after them (see SinkWriter): a few are enough. */
const SPARE_CHUNKS = 4;
const EMPTY = Buffer.alloc(0);

/**
 * Batches small pieces into chunks of about `chunkSize` bytes before writing them (one write per
 * record would cost a syscall and a chunk header each), and honours backpressure: after `write`
 * returns false nothing more is written until 'drain'. Memory stays bounded by one chunk plus one
 * piece, whatever the number of pieces.
 *
 * Pieces are put into the chunk as UTF-8 bytes, text encoded as it is added and records written
 * in place (addBytes): the chunk is handed to the socket as it is, with no text joined or
 * encoded on the way, and the pieces leave no garbage behind.
 *
 * A chunk the sink has finished with (its write's callback: the connection took it) is used again
 * for a later one. Each chunk is memory outside the JavaScript heap, which V8 counts towards its
 * next full collection until a collection frees it: allocating a chunk for every 64 KB made a long
 * download set off a full collection every few megabytes, which took more of the API's CPU than
 * rendering the records did.
 *
 * Nothing touches the sink before the first chunk is flushed, so a failure that happens early
 * (typically the first cursor batch) leaves the response untouched for a proper error reply.
 *
 * With a send timeout, a client that stops reading does not hold the response (and what it pins:
 * the cursor, its batches, this chunk) for as long as it keeps the connection open: when a wait
 * for 'drain' — the client taking the chunk written last — lasts that long, the connection is cut
 * and the wait fails with ResponseStalledError. The last chunk, written with the end, gets the
 * same time to leave.
 */
export class SinkWriter {
  /** Chunks filled up before the current one (when a piece did not fit), not yet written. */
  private full: Buffer[] = [];
  /** The whole chunks what is pending was written into (the current one last, when it holds any). */
  private filled: Buffer[] = [];
  /** Chunks the sink has finished with, each of the full size, for the next chunks. */
  private readonly spare: Buffer[] = [];
  private chunk: Buffer = EMPTY;
  private used = 0;
  private chunks = 0;
  private started = false;
  private closed = false;
  private onClose: (() => void) | null = null;

  constructor(
    private readonly sink: ResponseSink,
    /** Called once, right before the first byte goes out (status line and headers). */
    private readonly start: () => void,
    /** How long the client may take nothing before the response is aborted; 0: no limit. */
    private readonly sendTimeoutMs = 0,
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
    this.reserve(piece.length * MAX_UTF8_PER_UNIT);
    this.used += this.chunk.write(piece, this.used, 'utf8');
    return this.pendingBytes() >= this.chunkSize;
  }

  /**
   * Adds bytes written in place: `write` gets the chunk and the offset to write at, with room
   * for `maxBytes`, and returns the offset after what it wrote, or -1 to add nothing. Returns
   * undefined when nothing was added, else whether `flush` is due (as `add`).
   */
  addBytes(maxBytes: number, write: (target: Buffer, offset: number) => number): boolean | undefined {
    this.reserve(maxBytes);
    const end = write(this.chunk, this.used);
    if (end < 0) return undefined;
    this.used = end;
    return this.pendingBytes() >= this.chunkSize;
  }

  /** Writes what is pending and waits for 'drain' if the sink asks for it. */
  async flush(): Promise<void> {
    if (this.pendingBytes() === 0) return;
    const written = this.filled;
    const chunk = this.takePending();
    this.begin();
    if (this.closed || this.sink.destroyed === true) throw new ResponseClosedError();
    if (!this.sink.write(chunk, () => this.reuse(written))) await this.drained();
  }

  /** Writes what is pending and ends the response. */
  end(): void {
    const chunk = this.takePending();
    this.begin();
    this.sink.end(chunk.length > 0 ? chunk : undefined);
    // Output still buffered here (not yet taken by the socket): it gets the send timeout to leave.
    if (this.sendTimeoutMs > 0 && (this.sink.writableLength ?? 0) > 0) this.cutUnlessFinished();
  }

  /** Removes and returns what is pending, as one piece. */
  takePending(): Buffer {
    this.filled = [];
    const chunks = this.takeChunks();
    return chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks);
  }

  private pendingBytes(): number {
    let bytes = this.used;
    for (const chunk of this.full) bytes += chunk.length;
    return bytes;
  }

  /**
   * Room for `bytes` more in the current chunk: a new chunk when they would not fit. What the
   * small first chunk holds (at most FIRST_CHUNK bytes, typically an envelope's head) is copied
   * into the next chunk rather than left as a piece of its own: an answer that fits in one full
   * chunk (a page of records) then goes out as that chunk, instead of both being copied into a
   * third buffer of the answer's whole length when it ends (takePending).
   */
  private reserve(bytes: number): void {
    if (this.used + bytes <= this.chunk.length) return;
    const carried = this.chunks === 1 ? this.used : 0;
    if (this.used > 0 && carried === 0) this.full.push(this.chunk.subarray(0, this.used));
    const size = this.chunks === 0 ? FIRST_CHUNK : this.chunkSize + CHUNK_HEADROOM;
    const needed = carried + bytes;
    const next = (size === this.spareSize && needed <= size ? this.spare.pop() : undefined) ?? Buffer.allocUnsafe(Math.max(size, needed));
    if (carried > 0) {
      this.chunk.copy(next, 0, 0, carried);
      // Nothing pending is in the first chunk any more.
      this.filled.pop();
    }
    this.chunk = next;
    this.filled.push(this.chunk);
    this.chunks += 1;
    this.used = carried;
  }

  /** The size of the chunks kept for reuse: the full size (neither the first, nor one made larger for a large piece). */
  private get spareSize(): number {
    return this.chunkSize + CHUNK_HEADROOM;
  }

  /** Keeps chunks the sink has finished with (the callback of the write that took them), for the next ones. */
  private reuse(chunks: readonly Buffer[]): void {
    for (const chunk of chunks) {
      if (chunk.length === this.spareSize && this.spare.length < SPARE_CHUNKS) this.spare.push(chunk);
    }
  }

  /** The pending chunks, in order. */
  private takeChunks(): Buffer[] {
    const chunks = this.full;
    if (this.used > 0) chunks.push(this.chunk.subarray(0, this.used));
    this.full = [];
    // The socket keeps the chunk it was given: the next piece starts a new one (see reserve).
    this.chunk = EMPTY;
    this.used = 0;
    return chunks;
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
      const stalled =
        this.sendTimeoutMs > 0
          ? setTimeout(() => {
              this.onClose = null;
              this.cut();
              reject(new ResponseStalledError(this.sendTimeoutMs));
            }, this.sendTimeoutMs)
          : undefined;
      this.onClose = () => {
        clearTimeout(stalled);
        reject(new ResponseClosedError());
      };
      this.sink.once('drain', () => {
        clearTimeout(stalled);
        this.onClose = null;
        resolve();
      });
    });
  }

  /** Cuts the connection unless the response has left within the send timeout. */
  private cutUnlessFinished(): void {
    const stalled = setTimeout(() => this.cut(), this.sendTimeoutMs);
    this.onClose = () => clearTimeout(stalled);
    this.sink.once('finish', () => clearTimeout(stalled));
  }

  private cut(): void {
    if (this.sink.destroyed !== true) this.sink.destroy?.();
  }
}
