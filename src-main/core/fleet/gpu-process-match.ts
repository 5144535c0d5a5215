// Which configured service each GPU process belongs to, and what on a GPU or a
// service's port is not accounted for (issue #29 item 3, field notes §2: a
// stale llama-server left after an OOM kill held :8080 and the service
// crash-looped). A process belongs to a service when it, or one of its
// ancestors, listens on the service's port (vLLM's engine cores are children
// of the API server that listens). The console never kills anything: a flag
// names the process and the command the operator may run, as text.
import { FleetErrorCode } from './errors.js';
import type { DrmClientRow, ListenerRow, ProcessRow } from './host-health-parse.js';

export interface GpuProcessInput {
  readonly pid: number | null;
  readonly name: string | null;
  readonly usedMemoryMiB: number | null;
}

export interface MatchedGpuProcess {
  readonly gpuIndex: number;
  readonly pid: number | null;
  readonly name: string | null;
  readonly user: string | null;
  readonly usedMemoryMiB: number | null;
  /** The configured service it belongs to; null: none found (see `why`). */
  readonly serviceId: string | null;
  readonly why: string;
}

export interface ProcessFlag {
  readonly code: string;
  readonly message: string;
  readonly pid: number | null;
  readonly serviceId: string | null;
  readonly gpuIndex: number | null;
  /** What the operator may run, as text; the console runs nothing. */
  readonly command: string | null;
}

export interface MatchServiceInput {
  readonly id: string;
  readonly remoteHost: string;
  readonly remotePort: number;
  /** As the console reads it: `down` with a listener on the port is a stale process. */
  readonly health: 'ok' | 'loading' | 'down' | 'unknown';
}

export interface MatchInput {
  readonly gpus: readonly { readonly index: number; readonly processes: readonly GpuProcessInput[] | null }[];
  readonly processes: readonly ProcessRow[] | null;
  readonly listeners: readonly ListenerRow[] | null;
  readonly services: readonly MatchServiceInput[];
  /** The SSH user: another user's process needs sudo to stop. */
  readonly sshUser: string;
  /** The process list was read before the GPU processes: a PID missing from it may just be newer, and is not flagged. */
  readonly processListOlder?: boolean;
}

export interface MatchResult {
  readonly processes: MatchedGpuProcess[];
  readonly flags: ProcessFlag[];
}

const LOCAL = /^(127\.\d+\.\d+\.\d+|localhost|::1|\[::1\]|0\.0\.0\.0|\*|\[::\]|::)$/i;
/** Container runtimes' port proxies: the server is behind them, in a container the console cannot see from ss. */
const RUNTIME_PROXY = /^(docker-proxy|rootlesskit|rootlessport|slirp4netns|pasta|conmon)$/;
const MAX_DEPTH = 32;

export const gib = (mib: number): string => `${(mib / 1024).toFixed(1)} GiB`;

/** pid, its parent, … up to init (bounded; a loop in a racy table ends it). */
function ancestry(pid: number, byPid: ReadonlyMap<number, ProcessRow>): number[] {
  const out: number[] = [];
  let at: number | undefined = pid;
  while (at !== undefined && at > 1 && out.length < MAX_DEPTH && !out.includes(at)) {
    out.push(at);
    at = byPid.get(at)?.ppid;
  }
  return out;
}

const related = (a: number, b: number, byPid: ReadonlyMap<number, ProcessRow>) => ancestry(a, byPid).includes(b) || ancestry(b, byPid).includes(a);

interface PortOwners {
  readonly service: MatchServiceInput;
  /** Distinct processes listening on the port. */
  readonly pids: { pid: number; name: string }[];
  /** Why the service's processes cannot be told from ss (a proxy, a remote address, no pids shown); null when they can. */
  readonly unseen: string | null;
}

function portOwners(input: MatchInput): PortOwners[] {
  return input.services.map((service) => {
    if (!LOCAL.test(service.remoteHost)) return { service, pids: [], unseen: `${service.id} is at ${service.remoteHost}, not on this host` };
    if (input.listeners === null) return { service, pids: [], unseen: 'ss did not answer' };
    const lines = input.listeners.filter((l) => l.port === service.remotePort);
    const pids = new Map<number, { pid: number; name: string }>();
    for (const l of lines) for (const h of l.holders) pids.set(h.pid, h);
    const all = [...pids.values()];
    if (lines.length === 0) return { service, pids: all, unseen: `nothing listens on :${service.remotePort}` };
    if (all.length === 0) return { service, pids: all, unseen: `ss shows :${service.remotePort}'s process only to root` };
    const proxy = all.find((p) => RUNTIME_PROXY.test(p.name));
    if (proxy) return { service, pids: all, unseen: `${proxy.name} holds :${service.remotePort} (the server is in a container)` };
    return { service, pids: all, unseen: null };
  });
}

function stopCommand(pid: number, row: ProcessRow | undefined, chain: readonly number[], byPid: ReadonlyMap<number, ProcessRow>, sshUser: string): string {
  if (chain.some((p) => /^containerd-shim/.test(byPid.get(p)?.comm ?? ''))) {
    return `docker ps -q | xargs docker inspect -f '{{.State.Pid}} {{.Name}}' (find the container of PID ${pid}), then docker stop <name>`;
  }
  return row !== undefined && row.user !== sshUser ? `sudo kill ${pid}` : `kill ${pid}`;
}

/** The port flags: a second, unrelated listener on a service's port; a listener while the service does not answer. */
function portFlags(owners: readonly PortOwners[], byPid: ReadonlyMap<number, ProcessRow>, input: MatchInput): ProcessFlag[] {
  const flags: ProcessFlag[] = [];
  for (const o of owners) {
    if (o.unseen !== null || o.pids.length === 0) continue;
    const port = o.service.remotePort;
    const families: { pid: number; name: string }[][] = [];
    for (const p of o.pids) {
      const family = families.find((f) => f.some((q) => related(p.pid, q.pid, byPid)));
      if (family) family.push(p);
      else families.push([p]);
    }
    const named = o.pids.map((p) => `PID ${p.pid} (${p.name})`).join(', ');
    if (families.length > 1) {
      const pids = families.map((f) => f[0]!.pid);
      flags.push({
        code: FleetErrorCode.PORT_SECOND_LISTENER,
        message: `:${port} of ${o.service.id} has ${families.length} unrelated listeners: ${named} — a second server or a ghost squatting the port`,
        pid: pids[1] ?? null,
        serviceId: o.service.id,
        gpuIndex: null,
        command: `ps -o pid,lstart,args -p ${pids.join(',')} (the older one is the stale one), then ${stopCommand(pids[1]!, byPid.get(pids[1]!), ancestry(pids[1]!, byPid), byPid, input.sshUser)}`,
      });
    } else if (o.service.health === 'down') {
      const p = o.pids[0]!;
      flags.push({
        code: FleetErrorCode.PORT_STALE_LISTENER,
        message: `${named} listens on :${port} but ${o.service.id} does not answer — a stale process holding the port keeps a restarted server from binding it`,
        pid: p.pid,
        serviceId: o.service.id,
        gpuIndex: null,
        command: stopCommand(p.pid, byPid.get(p.pid), ancestry(p.pid, byPid), byPid, input.sshUser),
      });
    }
  }
  return flags;
}

/** Every GPU process with its service (or why none), and the flags an operator acts on. */
export function matchGpuProcesses(input: MatchInput): MatchResult {
  const byPid = new Map((input.processes ?? []).map((p) => [p.pid, p]));
  const owners = portOwners(input);
  const unseen = owners.filter((o) => o.unseen !== null).map((o) => o.unseen!);
  const processes: MatchedGpuProcess[] = [];
  const flags: ProcessFlag[] = [];
  for (const gpu of input.gpus) {
    for (const p of gpu.processes ?? []) {
      const row = p.pid === null ? undefined : byPid.get(p.pid);
      const chain = p.pid === null ? [] : ancestry(p.pid, byPid);
      const owner = owners.find((o) => o.unseen === null && o.pids.some((l) => chain.includes(l.pid)));
      const base = { gpuIndex: gpu.index, pid: p.pid, name: p.name ?? row?.comm ?? null, user: row?.user ?? null, usedMemoryMiB: p.usedMemoryMiB };
      if (owner) {
        processes.push({ ...base, serviceId: owner.service.id, why: `it or its parent listens on :${owner.service.remotePort}` });
        continue;
      }
      const caveat = unseen.length > 0 ? ` (not every service's process could be seen: ${unseen.join('; ')})` : '';
      const why = p.pid === null ? 'nvidia-smi did not show its PID' : row === undefined ? 'not in the process list the SSH user may read' : `neither it nor a parent listens on a configured service's port`;
      processes.push({ ...base, serviceId: null, why: row === undefined && input.processListOlder ? 'started after the last process list; matched at the next one' : why });
      if (row === undefined && input.processListOlder) continue;
      const memory = p.usedMemoryMiB === null ? 'memory' : gib(p.usedMemoryMiB);
      flags.push({
        code: FleetErrorCode.GPU_PROCESS_UNKNOWN,
        message: `PID ${p.pid ?? '?'} ${base.name ?? '(unknown)'} holds ${memory} on GPU${gpu.index} — not a configured service${caveat}`,
        pid: p.pid,
        serviceId: null,
        gpuIndex: gpu.index,
        command: p.pid === null ? null : stopCommand(p.pid, row, chain, byPid, input.sshUser),
      });
    }
  }
  return { processes, flags: [...flags, ...portFlags(owners, byPid, input)] };
}

/** AMD: DRM clients (fdinfo) → per GPU index, each process's VRAM summed over its clients on that card. */
export function amdGpuProcesses(
  clients: readonly DrmClientRow[],
  cards: ReadonlyMap<string, number>,
  processes: readonly ProcessRow[] | null,
): Map<number, GpuProcessInput[]> {
  const comm = new Map((processes ?? []).map((p) => [p.pid, p.comm]));
  const sums = new Map<string, { gpu: number; pid: number; bytes: number }>();
  for (const c of clients) {
    const gpu = cards.get(c.pdev);
    if (gpu === undefined || c.vramBytes <= 0) continue;
    const key = `${gpu}/${c.pid}`;
    const s = sums.get(key) ?? { gpu, pid: c.pid, bytes: 0 };
    s.bytes += c.vramBytes;
    sums.set(key, s);
  }
  const out = new Map<number, GpuProcessInput[]>();
  for (const s of sums.values()) {
    const list = out.get(s.gpu) ?? [];
    list.push({ pid: s.pid, name: comm.get(s.pid) ?? null, usedMemoryMiB: Math.round((s.bytes / 1048576) * 10) / 10 });
    out.set(s.gpu, list);
  }
  return out;
}
