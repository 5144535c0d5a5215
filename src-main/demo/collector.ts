// The demo host's answer to the console's per-host collector: the probe and the
// collector script (the demo's own copies of their fixed text: a golden test
// pins them against the console's), answered as dash with curl 7.81 on Ubuntu
// 22.04 would. Each command part runs through the demo's command interpreter;
// each URL is a real HTTP GET to the simulator that serves the tunnelled
// endpoints, so both paths read the same servers.
import { request } from 'node:http';
import type { ExecResult } from './nvidia-smi.js';

export const DEMO_COLLECTOR_PROBE =
  'gc_p=$((6*7)); printf \'gpu-console-probe %s %s %s %s\\n\' "$gc_p" "$(command -v curl || echo -)" "$(command -v timeout || echo -)" "$(curl --version 2>/dev/null | head -n 1)"';

const PROBE_ANSWER = 'gpu-console-probe 42 /usr/bin/curl /usr/bin/timeout curl 7.81.0 (x86_64-pc-linux-gnu) libcurl/7.81.0 OpenSSL/3.0.2 zlib/1.2.11\n';

export const DEMO_COLLECTOR_PREAMBLE = [
  '# gpu-console collector 1: framed output on stdout; nothing is written on this host',
  `gc_x() { printf '%s %s {\\n' "$gc_b" "$1"; { gc_e=$( { eval "$2"; } 2>&1 >&3 3>&-); gc_r=$?; } 3>&1; printf '\\n%s %s } %s\\n%s\\n%s %s .\\n' "$gc_b" "$1" "$gc_r" "$gc_e" "$gc_b" "$1"; }`,
  `gc_h() { gc_t=$1; shift; printf '%s http {\\n' "$gc_b"; { gc_e=$( { curl -q -gsS --noproxy '*' --max-time "$gc_t" -w "\\n$gc_b } %{http_code} %{size_download} %{time_total}\\n" "$@"; } 2>&1 >&3 3>&-); gc_r=$?; } 3>&1; printf '%s http } %s\\n%s\\n%s http .\\n' "$gc_b" "$gc_r" "$gc_e" "$gc_b"; }`,
].join('\n');

const TIME_LINE = `printf '%s T %s\\n' "$gc_b" "$(date +%s)"`;
const END_LINE = `printf '%s E\\n' "$gc_b"`;

export interface CollectorHost {
  nowMs(): number;
  /** The loopback port serving the host's `remotePort` now; null while nothing listens there. */
  servicePort?(remotePort: number): number | null;
  run(command: string): Promise<ExecResult>;
  tokenize(line: string): string[];
}

/** The answer to the probe or a collector script; null when `command` is neither. */
export function answerCollector(command: string, host: CollectorHost): Promise<ExecResult> | null {
  if (command === DEMO_COLLECTOR_PROBE) return Promise.resolve({ stdout: PROBE_ANSWER, stderr: '', code: 0 });
  if (!command.startsWith(`${DEMO_COLLECTOR_PREAMBLE}\n`)) return null;
  return runScript(command.slice(DEMO_COLLECTOR_PREAMBLE.length + 1).split('\n'), host);
}

async function runScript(lines: readonly string[], host: CollectorHost): Promise<ExecResult> {
  let b = '';
  let out = '';
  for (const line of lines) {
    if (line.startsWith('gc_b=')) b = line.slice('gc_b='.length);
    else if (line === TIME_LINE) out += `${b} T ${Math.floor(host.nowMs() / 1000)}\n`;
    else if (line === END_LINE) out += `${b} E\n`;
    else {
      let argv: string[];
      try {
        argv = host.tokenize(line);
      } catch (err) {
        return { stdout: out, stderr: `sh: ${(err as Error).message}\n`, code: 2 };
      }
      if (argv[0] === 'gc_x' && argv.length === 3) out += await commandPart(b, argv[1]!, argv[2]!, host);
      else if (argv[0] === 'gc_h' && argv.length >= 3) out += await httpPart(b, Number(argv[1]), argv.slice(2), host);
      else return { stdout: out, stderr: `sh: ${argv[0] ?? ''}: not found\n`, code: 127 };
    }
  }
  return { stdout: out, stderr: '', code: 0 };
}

/** `timeout N sh -c CMD` (the console wraps parts so when the host has timeout) runs CMD. */
function unwrap(command: string, host: CollectorHost): string {
  try {
    const argv = host.tokenize(command);
    if (argv[0] === 'timeout' && argv[2] === 'sh' && argv[3] === '-c' && argv.length === 5) return argv[4]!;
  } catch {
    // not a wrapper: run as it is
  }
  return command;
}

export async function commandPart(b: string, name: string, command: string, host: CollectorHost): Promise<string> {
  const r = await host.run(unwrap(command, host));
  // $(…) drops the trailing newlines of stderr, as the shell does.
  return `${b} ${name} {\n${r.stdout}\n${b} ${name} } ${r.code}\n${r.stderr.replace(/\n+$/, '')}\n${b} ${name} .\n`;
}

export async function httpPart(b: string, timeoutS: number, urls: readonly string[], host: CollectorHost): Promise<string> {
  let out = `${b} http {\n`;
  const errors: string[] = [];
  let rc = 0;
  for (const url of urls) {
    const r = await curlGet(url, timeoutS * 1000, host);
    out += `${r.body}\n${b} } ${String(r.status).padStart(3, '0')} ${Buffer.byteLength(r.body)} ${(r.ms / 1000).toFixed(6)}\n`;
    if (r.error) errors.push(r.error.line);
    rc = r.error?.code ?? 0;
  }
  return `${out}${b} http } ${rc}\n${errors.join('\n')}\n${b} http .\n`;
}

interface CurlResult {
  status: number;
  body: string;
  ms: number;
  error: { code: number; line: string } | null;
}

function curlGet(url: string, timeoutMs: number, host: CollectorHost): Promise<CurlResult> {
  const started = performance.now();
  const u = new URL(url);
  const port = host.servicePort?.(Number(u.port)) ?? null;
  const refused = (): CurlResult => ({
    status: 0,
    body: '',
    ms: performance.now() - started,
    error: { code: 7, line: `curl: (7) Failed to connect to ${u.hostname} port ${u.port} after 0 ms: Connection refused` },
  });
  if (port === null || (u.hostname !== '127.0.0.1' && u.hostname !== 'localhost')) return Promise.resolve(refused());
  return new Promise((resolve) => {
    const req = request({ host: '127.0.0.1', port, path: `${u.pathname}${u.search}`, method: 'GET', agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        clearTimeout(timer);
        resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8'), ms: performance.now() - started, error: null });
      });
      res.on('error', () => undefined);
    });
    const timer = setTimeout(() => {
      req.destroy();
      resolve({ status: 0, body: '', ms: timeoutMs, error: { code: 28, line: `curl: (28) Operation timed out after ${timeoutMs} milliseconds with 0 bytes received` } });
    }, timeoutMs);
    req.on('error', () => {
      clearTimeout(timer);
      resolve(refused());
    });
    req.end();
  });
}
