// Reads the health command's answer (host-health-command.ts) strictly: each
// section on its own, a figure that is absent or malformed is null (never 0)
// and said in `issues` with a coded cause naming the line; one bad section
// never discards the others.
import { parseListeners, type ListenerRow } from '../ssh/index.js';
import { FleetErrorCode } from './errors.js';
import { PROCESS_CAP, type DiskKind } from './host-health-command.js';
import { emptyRawFaults, type RawFaults } from './gpu-faults-parse.js';

export { parseListeners, type ListenerRow };

export interface HealthIssue {
  readonly code: string;
  readonly message: string;
}

export interface DiskReading {
  readonly kind: DiskKind;
  /** The path asked for, as the host expanded it. */
  readonly path: string;
  readonly filesystem: string | null;
  readonly mount: string | null;
  readonly totalBytes: number | null;
  readonly usedBytes: number | null;
  /** Available to an unprivileged user (df's Available), what a model download can use. */
  readonly freeBytes: number | null;
  readonly error: HealthIssue | null;
}

export interface CacheSizeReading {
  readonly path: string;
  readonly bytes: number | null;
  readonly error: HealthIssue | null;
}

export interface ProcessRow {
  readonly pid: number;
  readonly ppid: number;
  readonly user: string;
  readonly comm: string;
}


/** One DRM client of a process (AMD fdinfo): its VRAM plus GTT (an APU's model memory is GTT) on the card at `pdev`. */
export interface DrmClientRow {
  readonly pid: number;
  readonly pdev: string;
  readonly clientId: string;
  readonly vramBytes: number;
}

export interface ParsedHealth {
  bootId: string | null;
  uptimeS: number | null;
  load1: number | null;
  load5: number | null;
  load15: number | null;
  cpuCount: number | null;
  memTotalBytes: number | null;
  memAvailableBytes: number | null;
  swapTotalBytes: number | null;
  swapFreeBytes: number | null;
  disks: DiskReading[];
  /** Only in a `full` round. */
  cacheSizes: CacheSizeReading[] | null;
  /** `full` rounds: Docker's root, or why it is not known. */
  docker: { rootDir: string | null; why: string | null } | null;
  listeners: ListenerRow[] | null;
  processes: ProcessRow[] | null;
  /** AMD: card name (`card1`) by PCI address. */
  drmCards: Map<string, number> | null;
  drmClients: DrmClientRow[] | null;
  /** The fault sections, unread (gpu-faults-parse.ts reads them). */
  faults: RawFaults;
  /** The output ended with `@end` (false: cut by the output cap or the deadline). */
  complete: boolean;
  issues: HealthIssue[];
}

const num = (s: string | undefined): number | null => (s !== undefined && /^\d+(\.\d+)?$/.test(s) ? Number(s) : null);
const issue = (code: string, message: string): HealthIssue => ({ code, message });
const clip = (line: string) => (line.length > 160 ? `${line.slice(0, 160)}…` : line);

const DF_HEADER = /^Filesystem\s+(1-blocks|1B-blocks|1024-blocks)\s+Used\s+Available\s+(Capacity|Use%)\s+Mounted on$/;

/** One `@df kind path` section: GNU df -PB1's header and one data line, or df's own error line. */
export function parseDfSection(kind: DiskKind, path: string, lines: readonly string[]): DiskReading {
  const blank = { kind, path, filesystem: null, mount: null, totalBytes: null, usedBytes: null, freeBytes: null };
  const body = lines.filter((l) => l.trim() !== '');
  const err = body.find((l) => l.startsWith('df: '));
  if (err !== undefined) {
    const missing = /No such file or directory/.test(err);
    return { ...blank, error: issue(missing ? FleetErrorCode.HEALTH_PATH_MISSING : FleetErrorCode.HEALTH_DF_UNEXPECTED, `${path}: ${clip(err)}`) };
  }
  if (body.length !== 2 || !DF_HEADER.test(body[0]!.trim())) {
    return { ...blank, error: issue(FleetErrorCode.HEALTH_DF_UNEXPECTED, `df -PB1 ${path}: expected a header and one line, got ${body.length} line(s): "${clip(body[0] ?? '')}"`) };
  }
  const f = body[1]!.trim().split(/\s+/);
  const [fs, total, used, avail, pct] = f;
  const mount = f.slice(5).join(' ');
  if (f.length < 6 || num(total) === null || num(used) === null || num(avail) === null || !/^\d+%$|^-$/.test(pct ?? '') || !mount.startsWith('/')) {
    return { ...blank, error: issue(FleetErrorCode.HEALTH_DF_UNEXPECTED, `df -PB1 ${path}: unexpected line "${clip(body[1]!)}"`) };
  }
  return { kind, path, filesystem: fs!, mount, totalBytes: num(total), usedBytes: num(used), freeBytes: num(avail), error: null };
}

/** /proc/meminfo's kB lines → bytes, for the four keys asked; a key missing stays null. */
export function parseMeminfo(lines: readonly string[], into: ParsedHealth): void {
  const keys: Record<string, 'memTotalBytes' | 'memAvailableBytes' | 'swapTotalBytes' | 'swapFreeBytes'> = {
    MemTotal: 'memTotalBytes',
    MemAvailable: 'memAvailableBytes',
    SwapTotal: 'swapTotalBytes',
    SwapFree: 'swapFreeBytes',
  };
  for (const line of lines) {
    const m = /^(\w+):\s+(\d+)\s+kB$/.exec(line.trim());
    const key = m ? keys[m[1]!] : undefined;
    if (m && key) into[key] = Number(m[2]) * 1024;
    else if (line.trim() !== '') into.issues.push(issue(FleetErrorCode.HEALTH_UNPARSEABLE, `/proc/meminfo: unexpected line "${clip(line)}"`));
  }
}

/** `ps -e -o pid=,ppid=,user:32=,comm=` → rows; at most PROCESS_CAP (the command prints one more to tell). */
export function parseProcesses(lines: readonly string[], issues: HealthIssue[], cap = PROCESS_CAP): ProcessRow[] {
  const rows: ProcessRow[] = [];
  let bad = 0;
  for (const line of lines) {
    const m = /^\s*(\d+)\s+(\d+)\s+(\S+)\s+(.+)$/.exec(line);
    if (!m) {
      if (line.trim() !== '') bad++;
      continue;
    }
    if (rows.length === cap) {
      issues.push(issue(FleetErrorCode.HEALTH_LIST_CAPPED, `more than ${cap} processes: only the first ${cap} were read; GPU processes beyond them read unmatched`));
      break;
    }
    rows.push({ pid: Number(m[1]), ppid: Number(m[2]), user: m[3]!, comm: m[4]!.trim() });
  }
  if (bad > 0) issues.push(issue(FleetErrorCode.HEALTH_UNPARSEABLE, `ps: ${bad} line(s) could not be read`));
  return rows;
}

/** `grep -H` of fdinfo files: `/proc/<pid>/fdinfo/<fd>:drm-<key>:\t<value>` → one row per DRM client with VRAM. */
export function parseFdinfo(lines: readonly string[], issues: HealthIssue[]): DrmClientRow[] {
  const byFd = new Map<string, { pid: number; pdev?: string; client?: string; vram?: number; gtt?: number }>();
  for (const line of lines) {
    if (line.trim() === 'capped') {
      issues.push(issue(FleetErrorCode.HEALTH_LIST_CAPPED, 'DRM fdinfo: more processes than the console reads per round; GPU memory of the rest is not attributed'));
      continue;
    }
    const m = /^\/proc\/(\d+)\/fdinfo\/(\d+):drm-(client-id|pdev|memory-vram|memory-gtt):\s*(\S+)(?:\s+(\w+))?$/.exec(line.trim());
    if (!m) continue;
    const key = `${m[1]}/${m[2]}`;
    const fd = byFd.get(key) ?? { pid: Number(m[1]) };
    byFd.set(key, fd);
    if (m[3] === 'client-id') fd.client = m[4]!;
    else if (m[3] === 'pdev') fd.pdev = m[4]!;
    else fd[m[3] === 'memory-vram' ? 'vram' : 'gtt'] = Number(m[4]) * (m[5] === 'KiB' ? 1024 : m[5] === 'MiB' ? 1048576 : 1);
  }
  // Several fds of a process (dup, fork) share one DRM client: count each client once.
  const clients = new Map<string, DrmClientRow>();
  for (const fd of byFd.values()) {
    const bytes = (fd.vram ?? 0) + (fd.gtt ?? 0);
    if (fd.pdev === undefined || fd.client === undefined || (fd.vram === undefined && fd.gtt === undefined) || !Number.isFinite(bytes)) continue;
    clients.set(`${fd.pid}/${fd.pdev}/${fd.client}`, { pid: fd.pid, pdev: fd.pdev, clientId: fd.client, vramBytes: bytes });
  }
  return [...clients.values()];
}

function sections(text: string): { head: string; lines: string[] }[] {
  const out: { head: string; lines: string[] }[] = [];
  for (const line of text.split('\n')) {
    if (line.startsWith('@')) out.push({ head: line.slice(1), lines: [] });
    else out.at(-1)?.lines.push(line);
  }
  return out;
}

function emptyHealth(): ParsedHealth {
  return {
    bootId: null, uptimeS: null, load1: null, load5: null, load15: null, cpuCount: null,
    memTotalBytes: null, memAvailableBytes: null, swapTotalBytes: null, swapFreeBytes: null,
    disks: [], cacheSizes: null, docker: null, listeners: null, processes: null, drmCards: null, drmClients: null, faults: emptyRawFaults(),
    complete: false, issues: [],
  };
}

/** The whole answer; null when it is not the health command's at all (no `@v 1` first). */
export function parseHealthOutput(text: string): ParsedHealth | null {
  const parts = sections(text);
  if (parts[0]?.head !== 'v 1') return null;
  const h = emptyHealth();
  for (const { head, lines } of parts.slice(1)) {
    const sp = head.indexOf(' ');
    const name = sp < 0 ? head : head.slice(0, sp);
    const rest = sp < 0 ? '' : head.slice(sp + 1).trim();
    applySection(h, name, rest, lines);
  }
  return h;
}

function applySection(h: ParsedHealth, name: string, rest: string, lines: string[]): void {
  const f = rest.split(/\s+/);
  switch (name) {
    case 'boot_id':
      h.bootId = /^[0-9a-f-]{36}$/.test(rest) ? rest : null;
      if (h.bootId === null) h.issues.push(issue(FleetErrorCode.HEALTH_UNPARSEABLE, `boot_id: unreadable "${clip(rest)}"`));
      return;
    case 'uptime':
      h.uptimeS = num(f[0]);
      return;
    case 'loadavg':
      [h.load1, h.load5, h.load15] = [num(f[0]), num(f[1]), num(f[2])];
      if (h.load1 === null) h.issues.push(issue(FleetErrorCode.HEALTH_UNPARSEABLE, `/proc/loadavg: unreadable "${clip(rest)}"`));
      return;
    case 'nproc':
      h.cpuCount = /^\d+$/.test(rest) ? Number(rest) : null;
      return;
    case 'meminfo':
      return parseMeminfo(lines, h);
    case 'docker_root':
      h.docker = rest.startsWith('/') ? { rootDir: rest, why: null } : { rootDir: null, why: `docker info answered "${clip(rest)}"` };
      return;
    case 'docker_error':
      h.docker = { rootDir: null, why: rest === '' ? 'docker info failed without saying why' : clip(rest) };
      return;
    case 'df': {
      const sp = rest.indexOf(' ');
      const kind = rest.slice(0, sp) as DiskKind;
      if (sp > 0 && (kind === 'root' || kind === 'cache' || kind === 'docker')) h.disks.push(parseDfSection(kind, rest.slice(sp + 1), lines));
      return;
    }
    case 'du': {
      const m = /^(\d+) (\d*) (.+)$/.exec(rest);
      if (!m) return;
      const ok = m[2] !== '' && m[1] !== '124';
      const why = m[1] === '124' ? 'du did not finish within its deadline' : `du exited ${m[1]} without a total`;
      (h.cacheSizes ??= []).push({ path: m[3]!, bytes: ok ? Number(m[2]) : null, error: ok ? null : issue(FleetErrorCode.HEALTH_CACHE_SIZE_UNKNOWN, `${m[3]}: ${why}`) });
      return;
    }
    case 'ss':
      h.listeners = parseListeners(lines);
      return;
    case 'ps':
      h.processes = parseProcesses(lines, h.issues);
      return;
    case 'drm':
      h.drmCards = new Map(lines.flatMap((l) => {
        const m = /^card card(\d+) (\S+)$/.exec(l.trim());
        return m ? [[m[2]!, Number(m[1])] as [string, number]] : [];
      }));
      return;
    case 'fdinfo':
      h.drmClients = parseFdinfo(lines, h.issues);
      return;
    case 'nvq': {
      const m = /^(\d+) (\S+)$/.exec(rest);
      if (m) h.faults.nvq.push({ code: Number(m[1]), query: m[2]!, lines });
      return;
    }
    case 'klog_now':
      h.faults.klogNowS = /^\d+$/.test(rest) ? Number(rest) : null;
      return;
    case 'klog':
      h.faults.klog.push({ head: rest, lines });
      return;
    case 'amdfaults':
      h.faults.amd = lines;
      return;
    case 'end':
      h.complete = true;
  }
}
