// Stage: host guard. DNS-rebinding defence: the Host must name loopback and,
// when it carries a port, ours (a page served from another local port cannot
// reuse a rebound name). HTTP/1.1 requires a Host; HTTP/1.0 may omit it.
import type { IncomingMessage } from 'node:http';
import { wire } from '../exchange.js';
import { PASS, fail, type StageResult } from './stage.js';

const LOOPBACK_HOSTS = new Set(['127.0.0.1', 'localhost', '[::1]']);

/** 400 missing_host or 403 forbidden_host. */
export function guardHost(req: IncomingMessage, port: number): StageResult<void> {
  const raw = req.headers.host;
  if (raw === undefined || raw === '') {
    if (req.httpVersion === '1.0') return PASS;
    return fail(wire(400, 'missing_host', 'an HTTP/1.1 request must carry a Host header (127.0.0.1:PORT)', { headers: { connection: 'close' } }));
  }
  const host = splitHostHeader(raw);
  if (!host || !LOOPBACK_HOSTS.has(host.name) || (host.port !== null && host.port !== port)) {
    return fail(wire(403, 'forbidden_host', `the proxy answers only requests addressed to 127.0.0.1:${port} or localhost:${port}`));
  }
  return PASS;
}

/** Host header → name and port (port null when absent); null when it is not `name[:port]`. */
export function splitHostHeader(host: string): { name: string; port: number | null } | null {
  const h = host.toLowerCase();
  const m = /^(\[[0-9a-f:.]+\]|[a-z0-9.-]+)(?::(\d{1,5}))?$/.exec(h);
  if (!m) return null;
  return { name: m[1]!, port: m[2] === undefined ? null : Number(m[2]) };
}
