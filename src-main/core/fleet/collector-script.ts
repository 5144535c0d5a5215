// The per-host collector's words on the wire: the probe that tells whether a
// host can run it, the POSIX sh script sent with one exec per poll (nothing is
// installed or written on the host), and the reader of its framed answer.
//
// The script is a fixed preamble (two functions, the same every poll: the demo
// fleet recognises it verbatim) followed by one call per line whose arguments
// are shell-quoted: `gc_x NAME COMMAND` runs a console command (its stdout
// framed, its exit status and stderr after it) and `gc_h SECONDS URL…` reads
// the service endpoints with ONE curl process (keep-alive per port, a deadline
// per URL: one hung endpoint costs its own deadline and stales only itself).
// Every frame line starts with a random per-run boundary, so a login banner or
// MOTD around the frames is ignored and a body can never end a frame early.
import { randomBytes } from 'node:crypto';
import { shellQuote } from '../ssh/index.js';

/** The probe: POSIX arithmetic (fish and csh fail it), then where curl and timeout are and curl's version line. */
export const COLLECTOR_PROBE =
  'gc_p=$((6*7)); printf \'gpu-console-probe %s %s %s %s\\n\' "$gc_p" "$(command -v curl || echo -)" "$(command -v timeout || echo -)" "$(curl --version 2>/dev/null | head -n 1)"';

/** Curl older than this lacks nothing we use in theory, but is untested with `-w` per URL: read through tunnels. */
export const MIN_CURL: readonly [number, number] = [7, 29];

export interface ProbeAnswer {
  posix: boolean;
  curl: string | null;
  curlVersion: string | null;
  timeout: boolean;
}

/** Reads the probe's line wherever it is in the output (a banner may come first); null fields when it is absent. */
export function parseProbe(stdout: string): ProbeAnswer {
  const line = stdout.split('\n').find((l) => l.startsWith('gpu-console-probe '));
  if (line === undefined) return { posix: false, curl: null, curlVersion: null, timeout: false };
  const [, answer, curl, timeout, ...rest] = line.trim().split(' ');
  const version = /^curl (\d+\.\d+(?:\.\d+)?)/.exec(rest.join(' '))?.[1] ?? null;
  return { posix: answer === '42', curl: curl && curl !== '-' ? curl : null, curlVersion: version, timeout: !!timeout && timeout !== '-' };
}

/** Whether curl's version is at least MIN_CURL. */
export function curlRecentEnough(version: string | null): boolean {
  if (version === null) return false;
  const [major = 0, minor = 0] = version.split('.').map(Number);
  return major > MIN_CURL[0] || (major === MIN_CURL[0] && minor >= MIN_CURL[1]);
}

/**
 * The fixed part of every collector script. `gc_x` frames one command's stdout
 * (`B NAME {` … `B NAME } RC` … stderr … `B NAME .`); `gc_h` one curl run whose
 * `-w` closes each body with `B } HTTP_CODE BYTES SECONDS`. stderr is kept
 * apart through fd 3 so a command's messages never mix into its output. curl
 * reads no ~/.curlrc (`-q`) and goes to no proxy (`--noproxy '*'`: a host's
 * http_proxy must not see loopback reads).
 */
export const COLLECTOR_PREAMBLE = [
  '# gpu-console collector 1: framed output on stdout; nothing is written on this host',
  `gc_x() { printf '%s %s {\\n' "$gc_b" "$1"; { gc_e=$( { eval "$2"; } 2>&1 >&3 3>&-); gc_r=$?; } 3>&1; printf '\\n%s %s } %s\\n%s\\n%s %s .\\n' "$gc_b" "$1" "$gc_r" "$gc_e" "$gc_b" "$1"; }`,
  `gc_h() { gc_t=$1; shift; printf '%s http {\\n' "$gc_b"; { gc_e=$( { curl -q -gsS --noproxy '*' --max-time "$gc_t" -w "\\n$gc_b } %{http_code} %{size_download} %{time_total}\\n" "$@"; } 2>&1 >&3 3>&-); gc_r=$?; } 3>&1; printf '%s http } %s\\n%s\\n%s http .\\n' "$gc_b" "$gc_r" "$gc_e" "$gc_b"; }`,
].join('\n');

export interface ExecPart {
  /** `x0`, `x1`…: the frame's name. */
  name: string;
  command: string;
  timeoutMs: number;
}

export interface HttpPart {
  url: string;
}

export interface CollectorPlan {
  boundary: string;
  execs: readonly ExecPart[];
  urls: readonly HttpPart[];
  /** Per-URL deadline (curl --max-time). */
  httpTimeoutMs: number;
  /** Wrap exec parts in `timeout` (the probe found it) so a hung GPU tool costs only its part. */
  useTimeout: boolean;
}

export function newBoundary(): string {
  return `GCB${randomBytes(12).toString('hex')}`;
}

const seconds = (ms: number): string => String(Math.max(0.1, Math.round(ms / 100) / 10));

/** The script of one poll: preamble, boundary, the host's time, each part, the end mark. */
export function collectorScript(plan: CollectorPlan): string {
  const lines = [COLLECTOR_PREAMBLE, `gc_b=${plan.boundary}`, `printf '%s T %s\\n' "$gc_b" "$(date +%s)"`];
  for (const x of plan.execs) {
    const command = plan.useTimeout ? `timeout ${Math.ceil(x.timeoutMs / 1000)} sh -c ${shellQuote(x.command)}` : x.command;
    lines.push(`gc_x ${x.name} ${shellQuote(command)}`);
  }
  if (plan.urls.length > 0) lines.push(`gc_h ${seconds(plan.httpTimeoutMs)} ${plan.urls.map((u) => shellQuote(u.url)).join(' ')}`);
  lines.push(`printf '%s E\\n' "$gc_b"`);
  return lines.join('\n');
}

/** The URL curl reads on the host for a service's path (IPv6 literals in brackets). */
export function endpointUrl(host: string, port: number, path: string): string {
  const h = host.includes(':') && !host.startsWith('[') ? `[${host}]` : host;
  return `http://${h}:${port}${path.startsWith('/') ? path : `/${path}`}`;
}

export interface ExecFrame {
  stdout: string;
  /** null: the frame was cut before its exit status. */
  exitCode: number | null;
  stderr: string;
}

export interface HttpFrame {
  /** 0: curl got no HTTP answer (refused, timed out before headers). */
  status: number;
  body: string;
  /** Bytes curl says it received; compared with the body to notice a cut. */
  sizeBytes: number;
  seconds: number;
}

export interface CollectorAnswer {
  /** The host's clock (epoch seconds) as the script started; null when it did not say. */
  hostTimeS: number | null;
  /** The end mark was seen: nothing was cut. */
  complete: boolean;
  execs: Map<string, ExecFrame>;
  /** One per URL in order, as far as the answer got. */
  https: HttpFrame[];
  /** curl's exit status and stderr (the reason of failed URLs); null when the http frame was cut. */
  curl: { exitCode: number; stderr: string } | null;
  /** The boundary never appeared: the shell ran something else (a forced command, another shell). */
  framed: boolean;
}

/** Reads a collector answer by its boundary; text outside the frames (a banner, a MOTD) is ignored. */
export function parseCollectorAnswer(stdout: string, boundary: string): CollectorAnswer {
  const answer: CollectorAnswer = { hostTimeS: null, complete: false, execs: new Map(), https: [], curl: null, framed: false };
  const b = `${boundary} `;
  const time = new RegExp(`(?:^|\\n)${boundary} T (\\d+)\\n`).exec(stdout);
  if (time) {
    answer.framed = true;
    answer.hostTimeS = Number(time[1]);
  }
  answer.complete = stdout.includes(`\n${boundary} E\n`) || stdout.startsWith(`${boundary} E\n`);
  let at = 0;
  for (;;) {
    const open = stdout.indexOf(b, at);
    if (open < 0) break;
    const eol = stdout.indexOf('\n', open);
    if (eol < 0) break;
    const head = stdout.slice(open + b.length, eol);
    at = eol + 1;
    const m = /^(\S+) \{$/.exec(head);
    if (!m) continue;
    answer.framed = true;
    at = m[1] === 'http' ? readHttpFrame(stdout, b, at, answer) : readExecFrame(stdout, b, m[1]!, at, answer);
  }
  return answer;
}

function readExecFrame(text: string, b: string, name: string, from: number, answer: CollectorAnswer): number {
  const closeMark = `\n${b}${name} } `;
  const close = text.indexOf(closeMark, from);
  if (close < 0) return text.length;
  const eol = text.indexOf('\n', close + closeMark.length);
  const rc = Number(text.slice(close + closeMark.length, eol < 0 ? undefined : eol));
  if (eol < 0 || !Number.isInteger(rc)) return text.length;
  const endMark = `\n${b}${name} .\n`;
  const end = text.indexOf(endMark, eol);
  // The stderr after the status ends one newline before the mark (printf adds it).
  const stderr = end < 0 ? '' : text.slice(eol + 1, end);
  answer.execs.set(name, { stdout: text.slice(from, close), exitCode: rc, stderr });
  return end < 0 ? eol + 1 : end + endMark.length;
}

function readHttpFrame(text: string, b: string, from: number, answer: CollectorAnswer): number {
  const trailer = `\n${b}} `;
  const done = `${b}http } `;
  let at = from;
  for (;;) {
    const t = text.indexOf(trailer, at);
    const d = text.indexOf(done, at);
    // The frame's own close comes first: no more bodies.
    if (t < 0 || (d >= 0 && d < t)) break;
    const eol = text.indexOf('\n', t + trailer.length);
    if (eol < 0) return text.length;
    const [code, size, secs] = text.slice(t + trailer.length, eol).split(' ');
    answer.https.push({ status: Number(code) || 0, body: text.slice(at, t), sizeBytes: Number(size) || 0, seconds: Number(secs) || 0 });
    at = eol + 1;
  }
  const d = text.indexOf(done, at);
  if (d < 0) return text.length;
  const eol = text.indexOf('\n', d);
  const rc = Number(text.slice(d + done.length, eol < 0 ? undefined : eol));
  const endMark = `\n${b}http .\n`;
  const end = eol < 0 ? -1 : text.indexOf(endMark, eol);
  answer.curl = { exitCode: Number.isInteger(rc) ? rc : -1, stderr: end < 0 ? '' : text.slice(eol + 1, end) };
  return end < 0 ? text.length : end + endMark.length;
}
