// The resident collector's words on the wire (issue #31 item 1): ONE exec per
// host stays open and runs a POSIX sh loop sent with it (nothing installed or
// written on the host). The loop reads one request line per poll on stdin and
// prints the same framed answer as the one-shot script (collector-script.ts),
// so the answer's reader and the per-part parsing carry over.
//
// Nothing the console sends on stdin is run as a command. The commands a
// request may name are fixed when the channel opens (a table inside the script,
// each shell-quoted); a request line only names table entries by number, and
// endpoints as a host, a port and a path. The loop splits the line with
// globbing off (`set -f`), checks every word against a fixed shape (digits for
// numbers and ports; a host of [0-9A-Za-z.:-]; a path starting with `/` of
// [A-Za-z0-9/_.,=%?+~&-]) and refuses the whole line (`B ! why`, then `B E`)
// when one word does not fit, before anything runs. Words reach curl as quoted
// arguments and the table through `case` patterns, never through eval.
//
// Request line: `q [h SECONDS] [x ENTRY SECONDS]… [u HOST PORT PATH]…`
// (SECONDS: up to three digits, or digits and one decimal, e.g. `2.5`).
import { shellQuote } from '../ssh/index.js';

/** The fixed part before the channel's own values: the two framing functions and the word checks. */
export const RESIDENT_PREAMBLE = [
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

/** The fixed loop after the command table: check every word, then run the parts in order. */
export const RESIDENT_LOOP = [
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

/** A table entry: a command with no newline (the table is one line per entry). */
export function residentCommandFits(command: string): boolean {
  return !command.includes('\n') && !command.includes('\r') && !command.includes('\0') && command.length <= 16 * 1024;
}

/** The script the resident exec runs: preamble, the channel's boundary, whether `timeout` wraps parts, the command table, the loop. */
export function residentScript(boundary: string, commands: readonly string[], useTimeout: boolean): string {
  const table = commands.map((c, i) => `${i}) gc_c=${shellQuote(c)};;`);
  return [RESIDENT_PREAMBLE, `gc_b=${boundary}`, `gc_to=${useTimeout ? 1 : 0}`, 'gc_cmd() { case $1 in', ...table, '*) return 1;; esac; }', RESIDENT_LOOP].join('\n');
}

const HOST = /^[0-9A-Za-z.:-]{1,253}$/;
const PATH = /^\/[A-Za-z0-9/_.,=%?+~&-]{0,511}$/;

/** Whether a service endpoint can be named on a request line (the loop's own checks, applied before sending). */
export function residentEndpointFits(host: string, port: number, path: string): boolean {
  return HOST.test(host) && Number.isInteger(port) && port > 0 && port < 65536 && PATH.test(path);
}

export interface ResidentRequest {
  /** Table entries with their deadline on the host, in order (frames `x0`, `x1`…). */
  execs: readonly { entry: number; timeoutMs: number }[];
  urls: readonly { host: string; port: number; path: string }[];
  httpTimeoutMs: number;
}

const tenths = (ms: number): string => String(Math.min(999, Math.max(0.1, Math.round(ms / 100) / 10)));

/** One poll's request line (newline included). */
export function residentRequestLine(req: ResidentRequest): string {
  const words = ['q', 'h', tenths(req.httpTimeoutMs)];
  for (const x of req.execs) words.push('x', String(x.entry), String(Math.min(99_999, Math.max(1, Math.ceil(x.timeoutMs / 1000)))));
  for (const u of req.urls) words.push('u', u.host.replace(/^\[|\]$/g, ''), String(u.port), u.path);
  return `${words.join(' ')}\n`;
}
