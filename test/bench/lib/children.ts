// Child processes for the proxy benchmarks: the relay under measurement, the
// yardstick relay and the upstream stubs each run in their own process, so each
// has its own CPU account (read from /proc). Children run from an esbuild bundle
// of the bench file (as the app runs from its build), not through tsx.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export interface Child {
  child: ChildProcess;
  pid: number;
  /** The words after READY on the child's first READY line. */
  line: string[];
}

export interface ChildEntry {
  /** Node arguments that run the bench file (the bundle, or tsx and the source). */
  argv: string[];
  /** The bundle, for mapping CPU profile lines to sources; null under tsx. */
  bundle: string | null;
  dispose(): void;
}

/**
 * Bundles the bench file at `selfUrl` (its import.meta.url) unless `tsx`. The bundle
 * sits in node_modules/.cache, so that its external packages resolve; its name carries
 * this process's pid, as another engineer may run the same bench at the same time.
 */
export async function childEntry(selfUrl: string, tsx: boolean): Promise<ChildEntry> {
  const self = fileURLToPath(selfUrl);
  if (tsx) return { argv: ['--import', 'tsx', self], bundle: null, dispose: () => {} };
  const { build } = await import('esbuild');
  const out = join(dirname(self), `../../node_modules/.cache/gpu-console-bench/${basename(self, '.ts')}-${process.pid}.mjs`);
  mkdirSync(dirname(out), { recursive: true });
  await build({ entryPoints: [self], outfile: out, bundle: true, platform: 'node', format: 'esm', target: 'node20', packages: 'external', logLevel: 'error' });
  return { argv: [out], bundle: out, dispose: () => rmSync(out, { force: true }) };
}

/** Roles that relay (the proxy and the bare yardstick): they get the shipped V8 flags and, on request, a CPU profile. */
const RELAYS = new Set(['proxy', 'bare']);

/** The roles PROXY_BENCH_PROF profiles: PROXY_BENCH_PROF_ROLE, a comma-separated list (default: proxy). */
export function profiledRoles(): string[] {
  return process.env.PROXY_BENCH_PROF ? (process.env.PROXY_BENCH_PROF_ROLE ?? 'proxy').split(',').filter(Boolean) : [];
}

/**
 * Node flags for a child in `role`. The relays run with the V8 flag the shipped entry points set
 * (bin/gpu-console.js, shell/main.ts); PROXY_BENCH_PROXY_FLAGS replaces it (e.g.
 * "--allocation-site-pretenuring" for V8's default). PROXY_BENCH_PROF=DIR writes a CPU profile of
 * each profiled role (profiledRoles) to DIR/<role>-<driver pid>.cpuprofile.
 */
export function childFlags(role: string): string[] {
  const flags = RELAYS.has(role) ? (process.env.PROXY_BENCH_PROXY_FLAGS ?? '--no-allocation-site-pretenuring').split(' ').filter(Boolean) : [];
  const prof = profiledRoles().includes(role)
    ? ['--cpu-prof', '--cpu-prof-dir', process.env.PROXY_BENCH_PROF!, '--cpu-prof-name', `${role}-${process.pid}.cpuprofile`]
    : [];
  return [...flags, ...prof];
}

/** Starts `node <entry> <args…>` (args[0] is the role) and waits for its `READY …` line on stdout. */
export function startChild(entry: ChildEntry, args: string[], deadlineMs = 30_000): Promise<Child> {
  // stdin stays open for the child's lifetime: exitWithParent() ends the child when it closes.
  const child = spawn(process.execPath, [...childFlags(args[0]!), ...entry.argv, ...args], { stdio: ['pipe', 'pipe', 'inherit'] });
  return new Promise((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`child ${args[0]} not ready within ${deadlineMs} ms`));
    }, deadlineMs);
    const onExit = (code: number | null) => {
      clearTimeout(timer);
      reject(new Error(`child ${args[0]} exited ${code}`));
    };
    child.stdout!.on('data', (c: Buffer) => {
      out += c.toString();
      const m = /READY (.+)\n/.exec(out);
      if (m) {
        clearTimeout(timer);
        child.off('exit', onExit);
        out = '';
        resolve({ child, pid: child.pid!, line: m[1]!.split(' ') });
      }
    });
    child.once('exit', onExit);
  });
}

/** In a child: exit when the bench that started it is gone (its end of stdin closes), killed or not. */
export function exitWithParent(): void {
  process.stdin.on('end', () => process.exit(0));
  process.stdin.on('error', () => process.exit(0));
  process.stdin.resume();
}

/** SIGTERM (the relays exit in order, so that a profile is written), SIGKILL after the deadline. */
export function stopChild(c: Child, deadlineMs = 10_000): Promise<void> {
  if (c.child.exitCode !== null || c.child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(() => c.child.kill('SIGKILL'), deadlineMs);
    c.child.once('exit', () => {
      clearTimeout(timer);
      resolve();
    });
    c.child.kill('SIGTERM');
  });
}

const CLOCK_TICKS_PER_S = 100;

/** User + system CPU ms of a process so far (Linux /proc, 10 ms ticks; 0 elsewhere). */
export function cpuMs(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS_PER_S;
  } catch {
    return 0;
  }
}
