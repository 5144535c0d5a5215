// The one command a host-health round runs over the host's SSH session: a
// fixed POSIX sh script (a literal, the same every round) handed its values as
// positional arguments, each shell-quoted, so no configured path is ever part
// of the script's text. `~` in a path is expanded by the script from the host's
// own $HOME. It prints one `@section` marker per figure group
// (host-health-parse.ts reads them) and always exits 0: a part that fails says
// so in its section and the rest of the reading is still used.
import { shellJoin, shellQuote } from '../ssh/index.js';
import { FAULTS_SCRIPT, type KernelLogMode } from './gpu-faults-command.js';

/** Processes read per round (`ps`, AMD fdinfo walks); more are counted as capped, never read. */
export const PROCESS_CAP = 4000;
/** Processes whose DRM fdinfo is read on an AMD host (own processes only: others' fdinfo is not readable). */
export const FDINFO_PROCESS_CAP = 1024;
/** Bytes of fdinfo lines kept per round. */
export const FDINFO_BYTES_CAP = 262_144;

/**
 * $1 mode (`fast`: figures only; `full`: also Docker's root and `du` of the model caches), $2 the GPU
 * vendor (`amd` reads DRM fdinfo and hwmon/RAS, `nvidia` the fault query), $3 du's deadline in seconds,
 * $4 how the kernel log is read (auto | journalctl | dmesg | off), $5 since when (the host's epoch
 * seconds; 0: this boot), then pairs `<kind> <path>` for `df` (kind root | cache | docker).
 */
export const HEALTH_SCRIPT = [
  'mode=$1; gpu=$2; dus=$3; klog=$4; ks=$5; shift 5',
  'echo "@v 1"',
  'echo "@boot_id $(cat /proc/sys/kernel/random/boot_id 2>/dev/null)"',
  'echo "@uptime $(cat /proc/uptime 2>/dev/null)"',
  'echo "@loadavg $(cat /proc/loadavg 2>/dev/null)"',
  'echo "@nproc $(nproc 2>/dev/null || getconf _NPROCESSORS_ONLN 2>/dev/null)"',
  'echo "@meminfo"; grep -E "^(MemTotal|MemAvailable|SwapTotal|SwapFree):" /proc/meminfo 2>&1',
  'if [ "$mode" = full ]; then if command -v docker >/dev/null 2>&1; then r=$(timeout 5 docker info -f "{{.DockerRootDir}}" 2>&1) && echo "@docker_root $r" || echo "@docker_error $(printf "%s" "$r" | head -n 1)"; else echo "@docker_error docker is not installed"; fi; fi',
  'if command -v ionice >/dev/null 2>&1; then io="ionice -c3"; else io=""; fi',
  'while [ $# -ge 2 ]; do k=$1; p=$2; shift 2; case $p in "~") p=$HOME;; "~/"*) p=$HOME/${p#??};; esac; ' +
    'echo "@df $k $p"; df -PB1 -- "$p" 2>&1; ' +
    'if [ "$mode" = full ] && [ "$k" = cache ] && [ -d "$p" ]; then s=$(timeout "$dus" nice -n 19 $io du -sxb -- "$p" 2>/dev/null); echo "@du $? ${s%%[!0-9]*} $p"; fi; done',
  `echo "@ss"; ss -ltnpH 2>&1 | head -n 1000`,
  `echo "@ps"; ps -e -o pid=,ppid=,user:32=,comm= 2>&1 | head -n ${PROCESS_CAP + 1}`,
  'if [ "$gpu" = amd ]; then echo "@drm"; for c in /sys/class/drm/card[0-9] /sys/class/drm/card[0-9][0-9]; do [ -e "$c/device" ] && echo "card ${c##*/} $(basename "$(readlink -f "$c/device")")"; done; ' +
    `echo "@fdinfo"; n=0; for d in /proc/[0-9]*/fdinfo; do [ -r "$d" ] || continue; n=$((n+1)); if [ $n -gt ${FDINFO_PROCESS_CAP} ]; then echo "capped"; break; fi; ` +
    `grep -s -H -E "^drm-(client-id|pdev|memory-vram|memory-gtt):" "$d"/*; done 2>/dev/null | head -c ${FDINFO_BYTES_CAP}; echo; fi`,
  FAULTS_SCRIPT,
  'echo "@end"',
].join('; ');

/** What `$0` reads as in the script (ps and error lines name it). */
const SCRIPT_NAME = 'gpu-console-health';

export type DiskKind = 'root' | 'cache' | 'docker';

export interface HealthCommandInput {
  /** `full` also asks Docker for its root and measures the model caches. */
  mode: 'fast' | 'full';
  gpuVendor: 'nvidia' | 'amd' | null;
  cacheSizeTimeoutS: number;
  /** Model cache folders as configured (`~/…` allowed). */
  modelCache: readonly string[];
  /** Docker's root as a previous `full` round read it; null before or without Docker. */
  dockerRoot: string | null;
  kernelLog: KernelLogMode;
  /** The host's clock (epoch s) to read the kernel log from; null: since this boot. */
  kernelLogSinceS: number | null;
}

/** The command line: `sh -c '<HEALTH_SCRIPT>' gpu-console-health <mode> <vendor> <du s> <klog> <since s> root / cache <p>… [docker <root>]`. */
export function healthCommand(input: HealthCommandInput): string {
  const pairs: string[] = ['root', '/'];
  for (const p of input.modelCache) pairs.push('cache', p);
  if (input.dockerRoot !== null) pairs.push('docker', input.dockerRoot);
  const args = [SCRIPT_NAME, input.mode, input.gpuVendor ?? 'none', String(Math.max(1, Math.round(input.cacheSizeTimeoutS))), input.kernelLog, String(Math.max(0, Math.floor(input.kernelLogSinceS ?? 0))), ...pairs];
  return `sh -c ${shellQuote(HEALTH_SCRIPT)} ${shellJoin(args)}`;
}

export const DEFAULT_MODEL_CACHE = '~/.cache/huggingface';
