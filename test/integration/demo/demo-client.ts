// Test helpers: an ssh2 Client that trusts a demo host only through the
// fleet's known_hosts (fingerprint match), exec, and HTTP over forwardOut.

import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { request, type IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import ssh2 from 'ssh2';
import type { Client as ClientType } from 'ssh2';
import type { DemoFleet, DemoHostHandle } from '../../../src-main/demo/index.js';

const { Client, utils } = ssh2;

export function fingerprint(blob: Buffer): string {
  return 'SHA256:' + createHash('sha256').update(blob).digest('base64').replace(/=+$/, '');
}

/** Fingerprint of the key known_hosts lists for [127.0.0.1]:port, or null. */
export function knownHostFingerprint(knownHostsFile: string, port: number): string | null {
  for (const line of readFileSync(knownHostsFile, 'utf8').split('\n')) {
    const [hostPart, , b64] = line.trim().split(/\s+/);
    if (hostPart === `[127.0.0.1]:${port}` && b64) return fingerprint(Buffer.from(b64, 'base64'));
  }
  return null;
}

export interface ConnectOptions {
  privateKey?: string | Buffer;
  username?: string;
  password?: string;
}

export function connectSsh(fleet: DemoFleet, host: DemoHostHandle, options: ConnectOptions = {}): Promise<ClientType> {
  return new Promise((resolve, reject) => {
    const client = new Client();
    client.once('ready', () => resolve(client));
    client.once('error', reject);
    client.connect({
      host: '127.0.0.1',
      port: host.sshPort,
      username: options.username ?? 'ops',
      ...(options.password !== undefined ? { password: options.password } : { privateKey: options.privateKey ?? readFileSync(fleet.clientKeyFile) }),
      hostVerifier: (key: Buffer) => knownHostFingerprint(fleet.knownHostsFile, host.sshPort) === fingerprint(key),
      readyTimeout: 10_000,
    });
  });
}

export function exec(client: ClientType, command: string): Promise<{ stdout: string; stderr: string; code: number | null }> {
  return new Promise((resolve, reject) => {
    client.exec(command, (err, stream) => {
      if (err) return reject(err);
      let stdout = '';
      let stderr = '';
      let code: number | null = null;
      stream.on('data', (d: Buffer) => (stdout += d.toString()));
      stream.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
      stream.on('exit', (c: number | null) => (code = c));
      stream.on('close', () => resolve({ stdout, stderr, code }));
    });
  });
}

export function forward(client: ClientType, remotePort: number): Promise<Duplex> {
  return new Promise((resolve, reject) => {
    client.forwardOut('127.0.0.1', 0, '127.0.0.1', remotePort, (err, stream) => (err ? reject(err) : resolve(stream)));
  });
}

export interface HttpResult {
  status: number;
  headers: IncomingMessage['headers'];
  body: string;
}

/** One HTTP request over a fresh forwarded channel. */
export async function http(
  client: ClientType,
  remotePort: number,
  method: string,
  path: string,
  body?: unknown,
  onChunk?: (chunk: string) => void,
): Promise<HttpResult> {
  const stream = await forward(client, remotePort);
  return new Promise((resolve, reject) => {
    const payload = body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body);
    const req = request(
      {
        method,
        path,
        host: '127.0.0.1',
        port: remotePort,
        createConnection: () => stream as never,
        headers: payload === undefined ? {} : { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (d: string) => {
          text += d;
          onChunk?.(d);
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

/** The data payloads of an SSE body, `[DONE]` included. */
export function sseEvents(body: string): string[] {
  return body
    .split('\n\n')
    .map((b) => b.trim())
    .filter((b) => b.startsWith('data: '))
    .map((b) => b.slice('data: '.length));
}

/** Value of a Prometheus sample `name{labels…}` whose label set contains every given pair. */
export function metricValue(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  for (const line of text.split('\n')) {
    if (line.startsWith('#')) continue;
    const m = /^([^{\s]+)(\{[^}]*\})?\s+(\S+)$/.exec(line);
    if (!m || m[1] !== name) continue;
    const set = m[2] ?? '';
    if (Object.entries(labels).every(([k, v]) => set.includes(`${k}="${v}"`))) return Number(m[3]);
  }
  return undefined;
}

export { utils };
