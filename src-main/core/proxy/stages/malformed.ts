// A malformed request line or headers (e.g. CR/LF injection): Node refuses it
// before any stage sees it; the client still gets an OpenAI-shaped 400.
import type { Socket } from 'node:net';
import { errorBody } from '../errors.js';
import { wire } from '../exchange.js';

export function answerMalformed(err: NodeJS.ErrnoException, socket: Socket): void {
  if (socket.writable && !socket.destroyed) {
    const body = errorBody(wire(400, 'invalid_request', `malformed HTTP request (${err.code ?? 'parse error'})`));
    socket.end(`HTTP/1.1 400 Bad Request\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`);
  } else socket.destroy();
}
