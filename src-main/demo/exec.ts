// The demo host's command interpreter: no shell, just a tokenizer (single and
// double quotes, backslash escapes), `&&` lists (left to right, stopping at the
// first non-zero exit) and the commands an operator console runs —
// nvidia-smi (NVIDIA hosts), each service's restart command verbatim,
// hostname, uptime, echo, cat /proc/loadavg (and an AMD card's sysfs files),
// `ss -ltn[p][H]` (also under `sudo -n`), `kill <pid>` of a llama-server,
// `sshd -T` and `sudo -n sshd -T`, the log commands of log-commands.ts
// (their follows are streamed by the SSH server, log-stream.ts), and the
// kernel log (`journalctl -k`, `dmesg`: gpu-faults.ts).
// Two shell loops a console sends (GPU_DETECT_SCRIPT and AMD_SYSFS_SCRIPT, the
// demo's own copies) are recognised verbatim and answered as a shell on that
// host would; so are the collector's probe and script (collector.ts). Everything else is "command not found" (127); other shell
// operators (| ; & > <) fail with 2.

import type { AmdSysfsSample } from './amd-gpu-model.js';
import { answerCollector, type CollectorHost } from './collector.js';
import { AMD_SYSFS_SCRIPT, GPU_DETECT_SCRIPT, amdSysfsOutput, catSysfs, gpuDetectOutput } from './gpu-commands.js';
import { runNvidiaSmi, type ExecResult } from './nvidia-smi.js';
import type { GpuSample } from './gpu-model.js';
import { answerKernelCommand, type DemoKernelLog } from './gpu-faults.js';
import { answerLogCommand, type LogHost } from './log-stream.js';
import { SYSTEM_LISTENERS, runSs, runSshdTest, type TcpListener } from './system-commands.js';

export type { ExecResult };

export interface ExecHost {
  /** Which GPU tooling the host has: nvidia-smi (default) or an AMD card's amdgpu sysfs files. */
  gpuVendor?: 'nvidia' | 'amd';
  /** The AMD cards' sysfs figures (AMD hosts). */
  amdSamples?(): AmdSysfsSample[];
  hostname: string;
  bootMs: number;
  nowMs(): number;
  samples(): GpuSample[];
  /** The services' restart commands; running one restarts that service. */
  restartCommands: { tokens: string[]; run(): Promise<ExecResult> }[];
  loadAverage(): [number, number, number];
  /** `kill <pid>`: ends that process if it is one of the services' (false: no such process). */
  killProcess?(pid: number): boolean;
  /** The model services' listening sockets right now (none while a service is down or loading); sshd and the resolver are added. */
  serviceListeners?(): TcpListener[];
  /** The services' logs: journalctl, docker [compose] logs and tail read them (a follow needs the SSH server's stream). */
  logs?: LogHost;
  /** The console's host-health command (host-health.ts); null when argv is not it. */
  health?: { answer(argv: readonly string[]): ExecResult | null };
  /** The kernel log (`journalctl -k`, `dmesg`). */
  kernelLog?: DemoKernelLog;
  /** The loopback port a service's `remotePort` is served on now (null while it refuses): the collector's curl reads it. */
  servicePort?(remotePort: number): number | null;
}

export class TokenizeError extends Error {}

export function tokenize(command: string): string[] {
  const out: string[] = [];
  let cur = '';
  let inToken = false;
  let quote: '"' | "'" | null = null;
  for (let i = 0; i < command.length; i++) {
    const c = command[i]!;
    if (quote === "'") {
      if (c === "'") quote = null;
      else cur += c;
      continue;
    }
    if (quote === '"') {
      if (c === '"') quote = null;
      else if (c === '\\' && i + 1 < command.length && '"\\$`'.includes(command[i + 1]!)) cur += command[++i];
      else cur += c;
      continue;
    }
    if (c === "'" || c === '"') {
      quote = c;
      inToken = true;
    } else if (c === '\\' && i + 1 < command.length) {
      cur += command[++i];
      inToken = true;
    } else if (/\s/.test(c)) {
      if (inToken) out.push(cur);
      cur = '';
      inToken = false;
    } else if ('|;&<>'.includes(c)) {
      throw new TokenizeError(`shell operator '${c}' is not supported by the demo host`);
    } else {
      cur += c;
      inToken = true;
    }
  }
  if (quote) throw new TokenizeError(`unexpected EOF while looking for matching \`${quote}'`);
  if (inToken) out.push(cur);
  return out;
}

/** Splits a line at `&&` outside quotes; an empty side is bash's syntax error. */
export function splitAndList(command: string): string[] {
  const parts: string[] = [];
  let start = 0;
  let quote: '"' | "'" | null = null;
  for (let i = 0; i < command.length; i++) {
    const c = command[i]!;
    if (quote === "'") {
      if (c === "'") quote = null;
    } else if (quote === '"') {
      if (c === '\\') i++;
      else if (c === '"') quote = null;
    } else if (c === '\\') i++;
    else if (c === "'" || c === '"') quote = c;
    else if (c === '&' && command[i + 1] === '&') {
      parts.push(command.slice(start, i));
      start = i + 2;
      i++;
    }
  }
  parts.push(command.slice(start));
  if (parts.length > 1 && parts.some((p) => p.trim() === '')) throw new TokenizeError("syntax error near unexpected token `&&'");
  return parts;
}

function sameTokens(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((t, i) => t === b[i]);
}

function formatUptime(host: ExecHost): string {
  const d = new Date(host.nowMs());
  const upMin = Math.floor((host.nowMs() - host.bootMs) / 60_000);
  const days = Math.floor(upMin / 1440);
  const hh = Math.floor((upMin % 1440) / 60);
  const mm = upMin % 60;
  const up = `${days > 0 ? `${days} day${days === 1 ? '' : 's'}, ` : ''}${hh}:${String(mm).padStart(2, '0')}`;
  const [a, b, c] = host.loadAverage();
  const time = [d.getHours(), d.getMinutes(), d.getSeconds()].map((n) => String(n).padStart(2, '0')).join(':');
  return ` ${time} up ${up},  1 user,  load average: ${a.toFixed(2)}, ${b.toFixed(2)}, ${c.toFixed(2)}\n`;
}

/** The host as the collector's answers see it (collector.ts, and the resident loop of collector-resident.ts). */
export function collectorHostOf(host: ExecHost): CollectorHost {
  return { nowMs: () => host.nowMs(), servicePort: (p) => host.servicePort?.(p) ?? null, run: (c) => runCommand(c, host), tokenize };
}

export async function runCommand(command: string, host: ExecHost): Promise<ExecResult> {
  const vendor = host.gpuVendor ?? 'nvidia';
  const line = command.trim();
  const collected = answerCollector(line, collectorHostOf(host));
  if (collected) return collected;
  if (line === GPU_DETECT_SCRIPT) return gpuDetectOutput(vendor, host.amdSamples?.() ?? []);
  if (line === AMD_SYSFS_SCRIPT) return amdSysfsOutput(vendor === 'amd' ? (host.amdSamples?.() ?? []) : []);
  let segments: string[];
  try {
    segments = splitAndList(command);
  } catch (err) {
    return { stdout: '', stderr: `bash: ${(err as Error).message}\n`, code: 2 };
  }
  let out: ExecResult = { stdout: '', stderr: '', code: 0 };
  for (const segment of segments) {
    const r = await runSimple(segment, host);
    out = { stdout: out.stdout + r.stdout, stderr: out.stderr + r.stderr, code: r.code };
    if (r.code !== 0) break;
  }
  return out;
}

const SIGNALS = new Set(['-TERM', '-15', '-KILL', '-9', '-INT', '-2', '-SIGTERM', '-SIGKILL', '-SIGINT']);

/** `kill [-SIGNAL] <pid>…`: the services' processes end (any signal); other pids are not the demo's to end. */
function runKill(args: readonly string[], host: ExecHost): ExecResult {
  const pids = args.filter((a) => !SIGNALS.has(a));
  if (pids.length === 0) return { stdout: '', stderr: 'kill: usage: kill [-s sigspec | -n signum | -sigspec] pid | jobspec ... or kill -l [sigspec]\n', code: 2 };
  let stderr = '';
  for (const raw of pids) {
    const pid = /^\d+$/.test(raw) ? Number(raw) : NaN;
    if (Number.isNaN(pid)) stderr += `bash: kill: ${raw}: arguments must be process or job IDs\n`;
    else if (!host.killProcess?.(pid)) stderr += `bash: kill: (${pid}) - No such process\n`;
  }
  return { stdout: '', stderr, code: stderr ? 1 : 0 };
}

async function runSimple(command: string, host: ExecHost): Promise<ExecResult> {
  const vendor = host.gpuVendor ?? 'nvidia';
  let argv: string[];
  try {
    argv = tokenize(command);
  } catch (err) {
    return { stdout: '', stderr: `bash: ${(err as Error).message}\n`, code: 2 };
  }
  if (argv.length === 0) return { stdout: '', stderr: '', code: 0 };
  const restart = host.restartCommands.find((r) => sameTokens(r.tokens, argv));
  if (restart) return restart.run();
  const sshd = runSshdTest(argv);
  if (sshd) return sshd;
  const kernel = host.kernelLog ? answerKernelCommand(argv, host.kernelLog) : null;
  if (kernel) return kernel;
  const logs = host.logs ? answerLogCommand(argv, host.logs) : null;
  if (logs) return logs;
  const health = host.health?.answer(argv) ?? null;
  if (health) return health;
  const listeners = () => [...SYSTEM_LISTENERS, ...(host.serviceListeners?.() ?? [])];
  if (argv[0] === 'sudo' && argv[1] === '-n' && argv[2] === 'ss') return runSs(argv.slice(3), listeners(), { asRoot: true });
  const kill = argv[0] === 'kill' ? argv.slice(1) : argv[0] === 'sudo' && argv[1] === 'kill' ? argv.slice(2) : argv[0] === 'sudo' && argv[1] === '-n' && argv[2] === 'kill' ? argv.slice(3) : null;
  if (kill) return runKill(kill, host);
  const [cmd, ...args] = argv as [string, ...string[]];
  switch (cmd) {
    case 'ss':
      return runSs(args, listeners());
    case 'nvidia-smi':
      if (vendor !== 'nvidia') break;
      return runNvidiaSmi(args, host.samples());
    case 'echo':
      return { stdout: args.join(' ') + '\n', stderr: '', code: 0 };
    case 'hostname':
      return { stdout: host.hostname + '\n', stderr: '', code: 0 };
    case 'uptime':
      return { stdout: formatUptime(host), stderr: '', code: 0 };
    case 'cat':
      if (args.length === 1 && args[0] === '/proc/loadavg') {
        const [a, b, c] = host.loadAverage();
        return { stdout: `${a.toFixed(2)} ${b.toFixed(2)} ${c.toFixed(2)} 1/412 ${40000 + Math.floor(host.nowMs() / 1000) % 9999}\n`, stderr: '', code: 0 };
      }
      if (args.length === 1 && vendor === 'amd') {
        const file = catSysfs(args[0]!, host.amdSamples?.() ?? []);
        if (file) return file;
      }
      return { stdout: '', stderr: `cat: ${args[0] ?? ''}: No such file or directory\n`, code: 1 };
    case 'true':
      return { stdout: '', stderr: '', code: 0 };
  }
  return { stdout: '', stderr: `bash: ${cmd}: command not found\n`, code: 127 };
}
