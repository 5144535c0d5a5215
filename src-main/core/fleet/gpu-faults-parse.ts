// Reads the fault part of the health answer (gpu-faults-command.ts): the
// nvidia-smi fault CSV by its header (so a capture with units, or a driver
// that answered the older field names, reads the same), `NVRM: Xid` lines from
// journalctl or dmesg, and the amdgpu hwmon/RAS lines. A value nvidia-smi
// cannot give (`[N/A]`, `[Not Supported]`, `N/A`) is null with the reason in
// `issues`, never 0.
import { scrubSecretText } from '../base/index.js';
import { FleetErrorCode } from './errors.js';
import { THROTTLE_REASONS, type GpuFaultState, type ThrottleReason, type XidEvent } from './gpu-faults-state.js';

interface Issue {
  readonly code: string;
  readonly message: string;
}

/** The fault sections as the health answer carries them, before they are read. */
export interface RawFaults {
  /** One entry per nvidia-smi attempt: its exit code, the field list asked, its output lines. */
  nvq: { code: number; query: string; lines: string[] }[];
  /** The host's clock (epoch s) when the kernel log was read. */
  klogNowS: number | null;
  /** One entry per way tried: `journalctl`, `journalctl denied <user> <groups>`, `dmesg`, `… missing`. */
  klog: { head: string; lines: string[] }[];
  /** The amdgpu lines (`temp`, `ras`, `badpages`, `noras`); null on other hosts. */
  amd: string[] | null;
}

export const emptyRawFaults = (): RawFaults => ({ nvq: [], klogNowS: null, klog: [], amd: null });

/** A GPU's figures as read this round (the tracker adds slowdownSinceMs). */
export type GpuFaultReading = Omit<GpuFaultState, 'slowdownSinceMs'>;

const clip = (s: string, n = 160) => (s.length > n ? `${s.slice(0, n)}…` : s);
const isSentinel = (v: string) => v.startsWith('[') || v === 'N/A';

const blankReading = (gpuIndex: number): GpuFaultReading => ({
  gpuIndex, uuid: null, pciBusId: null, eccEnabled: null,
  eccCorrectedVolatile: null, eccUncorrectedVolatile: null, eccCorrectedAggregate: null, eccUncorrectedAggregate: null,
  retiredPages: null, retiredPagesPending: null, throttleReasons: null, temperatureCriticalC: null, rasUncorrected: null, rasCorrected: null,
});

/** `00000000:3B:00.0` (nvidia-smi) and `0000:3b:00` (an Xid line) → `0000:3b:00`, the form both join on. */
export function pciKey(busId: string): string | null {
  const m = /^(?:PCI:)?([0-9a-f]{4,8}):([0-9a-f]{2}):([0-9a-f]{2})(?:\.[0-7])?$/i.exec(busId.trim());
  return m ? `${m[1]!.slice(-4)}:${m[2]}:${m[3]}`.toLowerCase() : null;
}

/** Sentinels met, by field, with the GPUs that gave them: one issue per field, not one per GPU. */
class Unknowns {
  private readonly byField = new Map<string, { value: string; gpus: number[] }>();
  note(field: string, value: string, gpu: number): void {
    const e = this.byField.get(field) ?? { value, gpus: [] };
    e.gpus.push(gpu);
    this.byField.set(field, e);
  }
  issues(): Issue[] {
    return [...this.byField].map(([field, e]) => ({ code: FleetErrorCode.FAULTS_NOT_SUPPORTED, message: `${field} is ${e.value} on GPU ${e.gpus.join(', ')}` }));
  }
}

/** `--query-gpu=<fault fields> --format=csv[,nounits]` with its header → one reading per GPU. */
export function parseNvidiaFaultCsv(lines: readonly string[]): { gpus: GpuFaultReading[]; issues: Issue[] } {
  const body = lines.filter((l) => l.trim() !== '');
  const header = (body[0] ?? '').split(',').map((h) => h.trim().replace(/ \[[^\]]*\]$/, ''));
  if (!header.includes('index')) return { gpus: [], issues: [{ code: FleetErrorCode.FAULTS_QUERY_FAILED, message: `nvidia-smi fault query: no header row: "${clip(body[0] ?? '')}"` }] };
  const unknowns = new Unknowns();
  const gpus: GpuFaultReading[] = [];
  for (const line of body.slice(1)) {
    const cells = line.split(',').map((c) => c.trim());
    const index = Number(cells[header.indexOf('index')]);
    if (cells.length !== header.length || !Number.isInteger(index)) continue;
    const raw = (field: string): string | undefined => {
      const i = header.indexOf(field);
      return i < 0 ? undefined : cells[i];
    };
    // Value of a field; a sentinel is null and noted (unless `quiet`: a figure another field gives).
    const val = (field: string, quiet = false): string | null => {
      const v = raw(field);
      if (v === undefined) return null;
      if (isSentinel(v)) {
        if (!quiet) unknowns.note(field, v, index);
        return null;
      }
      return v;
    };
    gpus.push(readingOf(index, val, unknowns));
  }
  return { gpus, issues: unknowns.issues() };
}

type Val = (field: string, quiet?: boolean) => string | null;

function readingOf(index: number, val: Val, unknowns: Unknowns): GpuFaultReading {
  const int = (f: string, quiet = false) => {
    // A capture with units (`--format=csv`) writes a count bare too; a unit, if any, is after a space.
    const m = /^(\d+)(?: [A-Za-z%]+)?$/.exec(val(f, quiet) ?? '');
    return m ? Number(m[1]) : null;
  };
  const yesNo = (f: string, quiet = false) => {
    const v = val(f, quiet);
    return v === 'Yes' ? true : v === 'No' ? false : null;
  };
  const ecc = val('ecc.mode.current');
  const eccEnabled = ecc === 'Enabled' ? true : ecc === 'Disabled' ? false : null;
  // Ampere and later remap rows (retired_pages read [N/A]); older GPUs retire pages.
  const remapped = [int('remapped_rows.correctable', true), int('remapped_rows.uncorrectable', true)];
  const retired = [int('retired_pages.single_bit_ecc.count', true), int('retired_pages.double_bit.count', true)];
  const pair = remapped.every((n) => n !== null) ? remapped : retired.every((n) => n !== null) ? retired : null;
  if (pair === null) unknowns.note('retired_pages / remapped_rows', 'not reported', index);
  const pending = yesNo('remapped_rows.pending', true) ?? yesNo('retired_pages.pending', true);
  return {
    ...blankReading(index),
    uuid: val('uuid'),
    pciBusId: val('pci.bus_id'),
    eccEnabled,
    // With ECC off the counters read [N/A]: that is the reason, said once by ecc.mode.
    eccCorrectedVolatile: int('ecc.errors.corrected.volatile.total', eccEnabled === false),
    eccUncorrectedVolatile: int('ecc.errors.uncorrected.volatile.total', eccEnabled === false),
    eccCorrectedAggregate: int('ecc.errors.corrected.aggregate.total', eccEnabled === false),
    eccUncorrectedAggregate: int('ecc.errors.uncorrected.aggregate.total', eccEnabled === false),
    retiredPages: pair === null ? null : pair[0]! + pair[1]!,
    retiredPagesPending: pending,
    throttleReasons: reasonsOf(val),
  };
}

/** Active reasons from the per-reason fields (either prefix); null when any of them is unknown. */
function reasonsOf(val: Val): ThrottleReason[] | null {
  const active: ThrottleReason[] = [];
  let seen = 0;
  for (const r of THROTTLE_REASONS) {
    if (r === 'thermal') continue;
    const v = val(`clocks_event_reasons.${r}`) ?? val(`clocks_throttle_reasons.${r}`);
    if (v === null) return null;
    seen++;
    if (v === 'Active') active.push(r);
    else if (v !== 'Not Active') return null;
  }
  return seen > 0 ? active : null;
}

/** The nvidia-smi attempts: the first that answered, and whether it needed the older field names. */
export function readNvidiaAttempts(nvq: RawFaults['nvq']): { gpus: GpuFaultReading[]; issues: Issue[] } | null {
  if (nvq.length === 0) return null;
  const last = nvq.at(-1)!;
  if (last.code !== 0) {
    const first = last.lines.find((l) => l.trim() !== '') ?? '';
    return { gpus: [], issues: [{ code: FleetErrorCode.FAULTS_QUERY_FAILED, message: `nvidia-smi fault query exited ${last.code}: ${clip(first) || 'no output'}` }] };
  }
  const parsed = parseNvidiaFaultCsv(last.lines);
  if (nvq.length > 1) {
    const why = nvq[0]!.lines.find((l) => /is not a valid field/.test(l)) ?? '';
    parsed.issues.unshift({ code: FleetErrorCode.FAULTS_OLD_FIELD_NAMES, message: `this driver does not know the newer fault fields (${clip(why)}); read with the older names` });
  }
  return parsed;
}

const XID = /NVRM: Xid \((?:PCI:)?([0-9a-fA-F]{4,8}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2})(?:\.[0-7])?\): (\d+),?\s*(.*)$/;
// journalctl -o short-iso-precise (`… host kernel: NVRM…`) or dmesg --time-format iso (`…,123456+00:00 NVRM…`).
const STAMP = /^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(?:[.,](\d+))?(Z|[+-]\d\d:?\d\d)\s+(?:\S+\s+kernel:\s+)?(NVRM: Xid .*)$/;

/** One kernel log line → an Xid event (gpuIndex joined later); null when it is not one. */
export function parseXidLine(line: string): XidEvent | null {
  const s = STAMP.exec(line.trim());
  if (!s) return null;
  const x = XID.exec(s[4]!);
  if (!x) return null;
  const zone = s[3] === 'Z' ? 'Z' : `${s[3]!.slice(0, 3)}:${s[3]!.slice(-2)}`;
  const atMs = Date.parse(`${s[1]}.${(s[2] ?? '0').padEnd(3, '0').slice(0, 3)}${zone}`);
  if (!Number.isFinite(atMs)) return null;
  const pid = /\bpid=(\d+)/.exec(x[3]!);
  return { atMs, xid: Number(x[2]), pciBusId: pciKey(x[1]!), gpuIndex: null, pid: pid ? Number(pid[1]) : null, text: clip(scrubSecretText(s[4]!), 480) };
}

export interface KernelLogReading {
  source: 'journalctl' | 'dmesg' | null;
  why: string | null;
  xids: XidEvent[];
  hostNowS: number | null;
}

/** How the kernel log was read this round and its Xid lines; null when it is off. */
export function readKernelLog(raw: RawFaults): KernelLogReading | null {
  if (raw.klogNowS === null && raw.klog.length === 0) return null;
  const why: string[] = [];
  for (const { head, lines } of raw.klog) {
    const [tool, state, user, ...groups] = head.split(/\s+/);
    if (tool !== 'journalctl' && tool !== 'dmesg') continue;
    if (state === 'missing') {
      why.push(`${tool} is not installed`);
      continue;
    }
    if (tool === 'journalctl' && state === 'denied') {
      why.push(journalWhy(user ?? '', groups));
      continue;
    }
    const denied = lines.find((l) => l.startsWith('dmesg: '));
    if (denied !== undefined) {
      why.push(`${clip(denied, 100)} (kernel.dmesg_restrict=1, Ubuntu's default; sudo sysctl -w kernel.dmesg_restrict=0 allows it)`);
      continue;
    }
    const xids = lines.map(parseXidLine).filter((x): x is XidEvent => x !== null);
    return { source: tool, why: null, xids, hostNowS: raw.klogNowS };
  }
  return { source: null, why: why.length > 0 ? why.join('; ') : 'the kernel log was not read', xids: [], hostNowS: raw.klogNowS };
}

function journalWhy(user: string, groups: readonly string[]): string {
  const u = /^[a-z_][a-z0-9_.-]{0,31}\$?$/i.test(user) ? user : 'USER';
  // Bounded: the whole why must fit the contract's 400 characters with dmesg's part beside it.
  const g = clip(groups.filter((x) => /^[\w.-]+$/.test(x)).slice(0, 12).join(' '), 60);
  // A user who may read the whole journal and still sees no kernel line: the journal does not hold them.
  if (u === 'root' || groups.some((x) => x === 'systemd-journal' || x === 'adm' || x === 'root')) {
    return `journalctl -k shows no kernel messages for this boot although ${u} may read the whole journal (groups: ${g}): systemd-journald is not running or does not read the kernel log`;
  }
  return `journalctl -k shows no kernel messages to ${u} (groups: ${g || 'unknown'}): add the SSH user to the systemd-journal (or adm) group: sudo usermod -aG systemd-journal ${u}, then reconnect`;
}

/** amdgpu hwmon and RAS lines → one reading per card (GPU index = card number, as the sysfs source counts). */
export function readAmdFaults(lines: readonly string[]): { gpus: GpuFaultReading[]; issues: Issue[] } {
  const cards = new Map<number, { temps: { label: string; input: number | null; crit: number | null }[]; ue: number | null; ce: number | null; ras: boolean; bad: number | null; pending: boolean | null }>();
  const card = (name: string) => {
    const n = Number(/^card(\d+)$/.exec(name)?.[1] ?? NaN);
    if (!Number.isInteger(n)) return null;
    if (!cards.has(n)) cards.set(n, { temps: [], ue: null, ce: null, ras: false, bad: null, pending: null });
    return cards.get(n)!;
  };
  const milli = (v: string | undefined) => (v !== undefined && /^-?\d+$/.test(v) ? Number(v) / 1000 : null);
  const issues: Issue[] = [];
  for (const line of lines) {
    const f = line.trim().split(/\s+/);
    const c = f[1] !== undefined ? card(f[1]) : null;
    if (c === null) continue;
    if (f[0] === 'temp') c.temps.push({ label: f[3] ?? '-', input: milli(f[4]), crit: milli(f[5]) });
    else if (f[0] === 'noras') c.ras = false;
    else if (f[0] === 'badpages') [c.bad, c.pending] = [Number(f[2]), Number(f[3]) > 0];
    else if (f[0] === 'ras') {
      c.ras = true;
      if (f[3] === 'unreadable') issues.push({ code: FleetErrorCode.FAULTS_NOT_SUPPORTED, message: `${f[1]}: ${f[2]} is not readable by the SSH user` });
      const ue = /ue: (\d+)/.exec(line)?.[1];
      const ce = /ce: (\d+)/.exec(line)?.[1];
      if (ue !== undefined) c.ue = (c.ue ?? 0) + Number(ue);
      if (ce !== undefined) c.ce = (c.ce ?? 0) + Number(ce);
    }
  }
  const gpus: GpuFaultReading[] = [];
  for (const [n, c] of [...cards].sort((a, b) => a[0] - b[0])) {
    const withCrit = c.temps.filter((t) => t.crit !== null);
    const crit = (withCrit.find((t) => t.label === 'junction') ?? withCrit.find((t) => t.label === 'edge') ?? withCrit[0])?.crit ?? null;
    const hot = withCrit.some((t) => t.input !== null && t.input >= t.crit!);
    if (!c.ras) issues.push({ code: FleetErrorCode.FAULTS_NOT_SUPPORTED, message: `card${n}: amdgpu exposes no RAS error counters (no device/ras; consumer and APU parts have none)` });
    if (!hot) issues.push({ code: FleetErrorCode.FAULTS_NOT_SUPPORTED, message: `card${n}: amdgpu sysfs has no throttle state; thermal throttling shows when a temperature reaches its critical limit` });
    gpus.push({ ...blankReading(n), temperatureCriticalC: crit, throttleReasons: hot ? ['thermal'] : null, rasUncorrected: c.ue, rasCorrected: c.ce, retiredPages: c.bad, retiredPagesPending: c.pending });
  }
  return { gpus, issues };
}
