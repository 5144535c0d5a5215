// The demo host's answer to the console's resident collector: the exec that
// stays open and reads one request line a poll on stdin. The demo keeps its
// own copies of the script's fixed text (a golden test pins them against the
// console's) and reads the command table out of the channel's script; each
// request line is checked with the loop's own word rules (a word outside them:
// `B ! why`, nothing runs), then answered part by part through the same
// command interpreter and HTTP reads as the one-shot collector.
import type { ServerChannel } from 'ssh2';
import { commandPart, httpPart, type CollectorHost } from './collector.js';

export const DEMO_RESIDENT_PREAMBLE = [
  '# gpu-console collector 2 (resident): one request line a poll on stdin, framed answers on stdout; nothing on stdin is run, nothing is written on this host',
  `gc_x() { printf '%s %s {\\n' "$gc_b" "$1"; { gc_e=$( { gc_run "$2"; } 2>&1 >&3 3>&-); gc_r=$?; } 3>&1; printf '\\n%s %s } %s\\n%s\\n%s %s .\\n' "$gc_b" "$1" "$gc_r" "$gc_e" "$gc_b" "$1"; }`,
  `gc_h() { gc_t=$1; shift; printf '%s http {\\n' "$gc_b"; { gc_e=$( { curl -q -gsS --noproxy '*' --max-time "$gc_t" -w "\\n$gc_b } %{http_code} %{size_download} %{time_total}\\n" "$@"; } 2>&1 >&3 3>&-); gc_r=$?; } 3>&1; printf '%s http } %s\\n%s\\n%s http .\\n' "$gc_b" "$gc_r" "$gc_e" "$gc_b"; }`,
  'gc_run() { if [ "$gc_to" = 1 ]; then timeout "$1" sh -c "$gc_c"; else sh -c "$gc_c"; fi; }',
  "gc_d() { case $1 in ''|*[!0-9]*) return 1;; esac; [ ${#1} -le 5 ]; }",
  'gc_s() { case $1 in [0-9]|[0-9][0-9]|[0-9][0-9][0-9]|[0-9].[0-9]|[0-9][0-9].[0-9]|[0-9][0-9][0-9].[0-9]) return 0;; esac; return 1; }',
  "gc_hok() { case $1 in ''|*[!0-9A-Za-z.:-]*) return 1;; esac; [ ${#1} -le 253 ]; }",
  "gc_pok() { case $1 in /*) ;; *) return 1;; esac; case $1 in *[!A-Za-z0-9/_.,=%?+~\\&-]*) return 1;; esac; [ ${#1} -le 512 ]; }",
  `gc_no() { printf '%s ! %s\\n%s E\\n' "$gc_b" "$1" "$gc_b"; }`,
].join('\n');

export const DEMO_RESIDENT_LOOP = [
  'gc_q() {',
  '  [ "$1" = q ] || { gc_no "not a request"; return; }; shift; gc_t=5; gc_xs=; gc_us=',
  '  while [ $# -gt 0 ]; do',
  '    case $1 in',
  '      h) if [ $# -ge 2 ] && gc_s "$2"; then gc_t=$2; shift 2; else gc_no "bad h"; return; fi;;',
  '      x) if [ $# -ge 3 ] && gc_d "$2" && gc_d "$3" && gc_cmd "$2"; then gc_xs="$gc_xs $2/$3"; shift 3; else gc_no "bad x"; return; fi;;',
  '      u) if [ $# -ge 4 ] && gc_hok "$2" && gc_d "$3" && gc_pok "$4"; then',
  '           case $2 in *:*) gc_us="$gc_us http://[$2]:$3$4";; *) gc_us="$gc_us http://$2:$3$4";; esac; shift 4',
  '         else gc_no "bad u"; return; fi;;',
  '      *) gc_no "unknown word"; return;;',
  '    esac',
  '  done',
  `  printf '%s T %s\\n' "$gc_b" "$(date +%s)"; gc_k=0`,
  '  for gc_p in $gc_xs; do gc_cmd "${gc_p%/*}"; gc_x "x$gc_k" "${gc_p#*/}" </dev/null; gc_k=$((gc_k+1)); done',
  '  if [ -n "$gc_us" ]; then set -- $gc_us; gc_h "$gc_t" "$@" </dev/null; fi',
  `  printf '%s E\\n' "$gc_b"`,
  '}',
  'set -f',
  `printf '%s R\\n' "$gc_b"`,
  'while IFS= read -r gc_l; do set -- $gc_l; gc_q "$@"; done',
].join('\n');

interface ResidentScript {
  boundary: string;
  commands: string[];
}

/** The boundary and command table of a resident script; null when `command` is not one. */
export function parseResidentScript(command: string, tokenize: (line: string) => string[]): ResidentScript | null {
  if (!command.startsWith(`${DEMO_RESIDENT_PREAMBLE}\n`) || !command.endsWith(`\n${DEMO_RESIDENT_LOOP}`)) return null;
  const middle = command.slice(DEMO_RESIDENT_PREAMBLE.length + 1, command.length - DEMO_RESIDENT_LOOP.length - 1).split('\n');
  const boundary = /^gc_b=(GCB[0-9a-f]+)$/.exec(middle[0] ?? '')?.[1];
  if (!boundary || !/^gc_to=[01]$/.test(middle[1] ?? '') || middle[2] !== 'gc_cmd() { case $1 in' || middle.at(-1) !== '*) return 1;; esac; }') return null;
  const commands: string[] = [];
  for (const [i, line] of middle.slice(3, -1).entries()) {
    const m = /^(\d+)\) gc_c=(.*);;$/.exec(line);
    if (!m || Number(m[1]) !== i) return null;
    const argv = tokenize(m[2]!);
    if (argv.length !== 1) return null;
    commands.push(argv[0]!);
  }
  return { boundary, commands };
}

const DIGITS = /^\d{1,5}$/;
const SECONDS = /^(\d{1,3}|\d{1,3}\.\d)$/;
const HOST = /^[0-9A-Za-z.:-]{1,253}$/;
const PATH = /^\/[A-Za-z0-9/_.,=%?+~&-]{0,511}$/;

type Plan = { timeoutS: number; execs: string[]; urls: string[] } | { refused: string };

/** A request line read as the loop reads it: every word checked before anything runs. */
export function planRequest(line: string, commands: readonly string[]): Plan {
  const w = line.split(/[ \t]+/).filter((x) => x !== '');
  if (w[0] !== 'q') return { refused: 'not a request' };
  const plan = { timeoutS: 5, execs: [] as string[], urls: [] as string[] };
  let i = 1;
  while (i < w.length) {
    const [word, a = '', b = '', c = ''] = w.slice(i, i + 4);
    if (word === 'h' && SECONDS.test(a)) {
      plan.timeoutS = Number(a);
      i += 2;
    } else if (word === 'x' && DIGITS.test(a) && DIGITS.test(b) && Number(a) < commands.length) {
      plan.execs.push(commands[Number(a)]!);
      i += 3;
    } else if (word === 'u' && HOST.test(a) && DIGITS.test(b) && PATH.test(c)) {
      plan.urls.push(`http://${a.includes(':') ? `[${a}]` : a}:${b}${c}`);
      i += 4;
    } else return { refused: word === 'h' || word === 'x' || word === 'u' ? `bad ${word}` : 'unknown word' };
  }
  return plan;
}

/** One request's answer, framed as the loop prints it. */
export async function answerRequest(line: string, script: ResidentScript, host: CollectorHost): Promise<string> {
  const b = script.boundary;
  const plan = planRequest(line, script.commands);
  if ('refused' in plan) return `${b} ! ${plan.refused}\n${b} E\n`;
  let out = `${b} T ${Math.floor(host.nowMs() / 1000)}\n`;
  for (const [k, command] of plan.execs.entries()) out += await commandPart(b, `x${k}`, command, host);
  if (plan.urls.length > 0) out += await httpPart(b, plan.timeoutS, plan.urls, host);
  return `${out}${b} E\n`;
}

/** What the demo's SSH server hands the loop: its stdin lines and a way out. */
export interface ResidentChannelIo {
  write(text: string): void;
  onLine(fn: (line: string) => void): void;
  /** The console closed stdin or the channel: the loop ends (exit 0). */
  onEnd(fn: () => void): void;
  exit(code: number): void;
}

/** Runs the resident loop on `io` when `command` is the resident script; false otherwise. */
export function serveResident(command: string, io: ResidentChannelIo, host: CollectorHost): boolean {
  const script = parseResidentScript(command, host.tokenize);
  if (!script) return false;
  let ended = false;
  let chain = Promise.resolve();
  io.write(`${script.boundary} R\n`);
  io.onLine((line) => {
    chain = chain.then(async () => {
      const answer = await answerRequest(line, script, host);
      if (!ended) io.write(answer);
    });
  });
  io.onEnd(() => {
    if (ended) return;
    ended = true;
    void chain.then(() => io.exit(0));
  });
  return true;
}

/** An ssh2 exec channel as the loop's stdin and stdout. */
export function residentChannelIo(channel: ServerChannel): ResidentChannelIo {
  let pending = '';
  return {
    write: (text) => {
      if (!channel.destroyed) channel.write(text);
    },
    onLine: (fn) =>
      channel.on('data', (d: Buffer) => {
        const lines = (pending + d.toString('utf8')).split('\n');
        pending = lines.pop() ?? '';
        for (const line of lines) fn(line);
      }),
    onEnd: (fn) => {
      channel.once('end', fn);
      channel.once('close', fn);
    },
    exit: (code) => {
      if (channel.destroyed) return;
      channel.exit(code);
      channel.end();
    },
  };
}
