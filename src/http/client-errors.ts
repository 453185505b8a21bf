/**
 * Requests Node's HTTP parser cannot read (a request line with bytes outside ASCII, a malformed
 * header, headers past the size limit, broken chunked framing) never reach express: Node answers
 * them itself, with a status and no body. This answers them the way every other error is
 * answered, with the JSON error body (none for a HEAD request), then closes the connection (its
 * framing is lost).
 */
import type { Server } from 'node:http';
import type { Duplex } from 'node:stream';
import { ApiError } from '../errors.js';

const STATUS_TEXT: Record<number, string> = {
  400: 'Bad Request',
  408: 'Request Timeout',
  413: 'Payload Too Large',
  431: 'Request Header Fields Too Large',
};

/** The answer to a request the parser refused, by Node's error code (as Node's own handler picks it). */
export function clientErrorOf(code: string | undefined): ApiError {
  switch (code) {
    case 'HPE_HEADER_OVERFLOW':
      return new ApiError(431, 'headers_too_large', 'The request headers are too large.');
    case 'HPE_CHUNK_EXTENSIONS_OVERFLOW':
      return new ApiError(413, 'body_too_large', 'The chunk extensions of the request are too large.');
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return new ApiError(408, 'request_timeout', 'The request did not arrive in time.');
    default:
      return new ApiError(400, 'bad_request', 'The request could not be read as HTTP.');
  }
}

export function answerClientErrors(server: Server): void {
  server.on('clientError', (err: NodeJS.ErrnoException, socket: Duplex) => {
    if (err.code === 'ECONNRESET' || !socket.writable) {
      socket.destroy();
      return;
    }
    const error = clientErrorOf(err.code);
    // A HEAD request's answer has no body, even this one: its client would read one as garbage.
    const raw = (err as { rawPacket?: unknown }).rawPacket;
    const head = Buffer.isBuffer(raw) && raw.subarray(0, 5).toString('latin1') === 'HEAD ';
    const body = head ? '' : JSON.stringify(error.toBody());
    socket.end(
      `HTTP/1.1 ${error.status} ${STATUS_TEXT[error.status] ?? 'Bad Request'}\r\n` +
        'Content-Type: application/json; charset=utf-8\r\n' +
        `Content-Length: ${Buffer.byteLength(body)}\r\n` +
        'Connection: close\r\n\r\n' +
        body,
    );
  });
}
