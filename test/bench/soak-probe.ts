// What the soak samples of the console from outside (Linux /proc): RSS, open
// file descriptors, descendant processes by command (ssh masters, shells),
// the V8 heap its --import probe writes, and the SQLite files' sizes.
import { readdirSync, readFileSync, readlinkSync, statSync } from 'node:fs';
import { join } from 'node:path';

export interface Sample {
  atMs: number;
  /** Which console process (0, 1, … : each restart is a new one). */
  run: number;
  rssBytes: number;
  heapUsedBytes: number | null;
  fds: number;
  /** Descendant processes by command name (`ssh` ×2, …). */
  children: Record<string, number>;
  dbBytes: number;
  walBytes: number;
}

function rssBytes(pid: number): number {
  const m = /^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) * 1024 : NaN;
}

function fdCount(pid: number): number {
  return readdirSync(`/proc/${pid}/fd`).length;
}

/** Every process's parent and command name, read once. */
function processTable(): Map<number, { ppid: number; comm: string; args: string }> {
  const table = new Map<number, { ppid: number; comm: string; args: string }>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const comm = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      const args = readFileSync(`/proc/${entry}/cmdline`, 'utf8').replace(/\0/g, ' ').trim();
      table.set(Number(entry), { ppid, comm, args });
    } catch {
      // exited while read
    }
  }
  return table;
}

/** A process's descendants (children, grandchildren, …). */
export function descendants(pid: number): Array<{ pid: number; comm: string; args: string }> {
  const table = processTable();
  const out: Array<{ pid: number; comm: string; args: string }> = [];
  const queue = [pid];
  while (queue.length > 0) {
    const parent = queue.shift()!;
    for (const [p, info] of table) {
      if (info.ppid === parent) {
        out.push({ pid: p, comm: info.comm, args: info.args });
        queue.push(p);
      }
    }
  }
  return out;
}

/** Processes anywhere on the machine whose command line names `needle` (what a stopped console left behind). */
export function processesNaming(needle: string, except: number[] = []): Array<{ pid: number; args: string }> {
  return [...processTable()].filter(([p, i]) => i.args.includes(needle) && !except.includes(p) && p !== process.pid).map(([pid, i]) => ({ pid, args: i.args }));
}

function sizeOf(file: string): number {
  try {
    return statSync(file).size;
  } catch {
    return 0;
  }
}

function heapUsed(heapFile: string, pid: number): number | null {
  try {
    const h = JSON.parse(readFileSync(heapFile, 'utf8')) as { pid: number; heapUsed: number };
    return h.pid === pid ? h.heapUsed : null;
  } catch {
    return null;
  }
}

export function sample(pid: number, run: number, dataDir: string, heapFile: string): Sample | null {
  try {
    const children: Record<string, number> = {};
    for (const d of descendants(pid)) children[d.comm] = (children[d.comm] ?? 0) + 1;
    const db = join(dataDir, 'gpu-console.db');
    return { atMs: performance.now(), run, rssBytes: rssBytes(pid), heapUsedBytes: heapUsed(heapFile, pid), fds: fdCount(pid), children, dbBytes: sizeOf(db), walBytes: sizeOf(`${db}-wal`) };
  } catch {
    return null; // the console is between runs
  }
}

/** Open fds by kind (socket, pipe, anon_inode, a path's folder): the breakdown printed when the count moved. */
export function fdKinds(pid: number): Record<string, number> {
  const kinds: Record<string, number> = {};
  try {
    for (const fd of readdirSync(`/proc/${pid}/fd`)) {
      let target = '?';
      try {
        target = readlinkSync(`/proc/${pid}/fd/${fd}`);
      } catch {
        // closed while read
      }
      const kind = /^(socket|pipe|anon_inode):/.exec(target)?.[1] ?? (target.startsWith('/') ? target.replace(/\/[^/]*$/, '/') : target);
      kinds[kind] = (kinds[kind] ?? 0) + 1;
    }
  } catch {
    // gone
  }
  return kinds;
}
