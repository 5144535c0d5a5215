// Benchmark (prints figures; not a test): what one remote command costs on
// each SSH transport. The console polls GPUs with one such command per host
// per second, so this is the transport's standing cost, beside the per-request
// cost of tunnels in ssh-forward.ts. Two hosts:
//   - Debian's sshd in a network namespace (a real login shell), answering the
//     GPU query from a recorded nvidia-smi capture (`cat`), as a GPU host
//     answers it from the driver;
//   - a demo host (an ssh2 SSH server in this process, its nvidia-smi
//     simulated), which has no POSIX shell: the openssh transport stays on an
//     `ssh` process per command there, and this shows that fallback's cost.
// Rows per host: builtin (ssh2), openssh (commands on one remote shell through
// the master, openssh-shell.ts), openssh one-shot (an `ssh` process per
// command). Printed: latency p50/p99, the console process's CPU per command
// (the demo row includes the in-process SSH server's), and the CPU of the
// `ssh` processes it starts, ended and still running (master, command shell;
// from /proc, Linux).
//   npx tsx test/bench/ssh-exec.ts [--count N]
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { silentLogger } from '../../src-main/core/base/index.js';
import { ConfigSchema } from '../../src-main/core/config/index.js';
import { startDemoFleet } from '../../src-main/demo/index.js';
import { MemoryTrustStore, OpenSshHelperServer, OpenSshProbe, OpenSshSession, SshConnection, type SshHostTarget, type SshSession } from '../../src-main/core/ssh/index.js';
import { createNetnsHost, knownHostsLine, preClean } from '../helpers/netns-sshd.js';

const { values } = parseArgs({ options: { count: { type: 'string', default: '200' } } });
const N = Number(values.count);
const QUERY = 'nvidia-smi --query-gpu=index,name,memory.used,memory.total,utilization.gpu,power.draw,temperature.gpu --format=csv,noheader,nounits';
const CAPTURE = resolve('test/fixtures/nvidia-smi/h100-80gb-hbm3_drv590.48.01.query-gpu.load.csv');

/** CPU of this process's `ssh` children: those that ended (cutime + cstime) and those still running (the master, the command shell). */
function childrenCpuMs(): number {
  const fields = (stat: string) => stat.split(') ')[1]!.split(' ');
  const self = fields(readFileSync('/proc/self/stat', 'utf8'));
  let ticks = Number(self[13]) + Number(self[14]);
  for (const pid of readdirSync('/proc')) {
    if (!/^\d+$/.test(pid)) continue;
    try {
      const f = fields(readFileSync(`/proc/${pid}/stat`, 'utf8'));
      if (Number(f[1]) === process.pid) ticks += Number(f[11]) + Number(f[12]); // ppid; utime + stime
    } catch {
      // gone meanwhile
    }
  }
  return ticks * 10; // USER_HZ = 100
}

const dir = mkdtempSync(join(tmpdir(), 'gc-bench-exec-'));
// ControlPath is a unix socket (at most 107 bytes): a short folder of its own.
const controlDir = mkdtempSync('/tmp/gcx-');
const helper = new OpenSshHelperServer(controlDir);
const probe = new OpenSshProbe();

async function measure(title: string, host: SshHostTarget, command: string): Promise<void> {
  const sessions: [string, SshSession][] = [
    ['builtin', new SshConnection(host, { services: { trustStore: new MemoryTrustStore() } })],
    ['openssh', new OpenSshSession(host, { controlDir, helper, probe, services: { trustStore: new MemoryTrustStore() } })],
    ['openssh one-shot', new OpenSshSession({ ...host, label: `${host.label}-1` }, { controlDir, helper, probe, services: { trustStore: new MemoryTrustStore() }, commandShell: false })],
  ];
  console.log(`${title}: one GPU query (${N} per row, after 20 warm-up)`);
  for (const [name, s] of sessions) {
    await s.connect();
    for (let i = 0; i < 20; i++) await s.exec(command);
    const shell = s instanceof OpenSshSession ? ` [command shell: ${s.commandShellState}]` : '';
    const children0 = childrenCpuMs();
    const cpu0 = process.cpuUsage();
    const lat: number[] = [];
    for (let i = 0; i < N; i++) {
      const t = performance.now();
      const r = await s.exec(command);
      lat.push(performance.now() - t);
      if (r.exitCode !== 0 || !r.stdout.includes(',')) throw new Error(`${name}: the query failed: ${r.exitCode} ${r.stderr}`);
    }
    const cpu = process.cpuUsage(cpu0);
    const children = childrenCpuMs() - children0;
    lat.sort((a, b) => a - b);
    const pct = (p: number) => lat[Math.min(N - 1, Math.floor((p / 100) * N))]!.toFixed(2);
    console.log(
      `  ${name.padEnd(17)} latency p50 ${pct(50)} ms p99 ${pct(99)} ms | console CPU ${((cpu.user + cpu.system) / N / 1000).toFixed(2)} ms per command` +
        ` | child processes (ssh clients, sshd) ${(children / N).toFixed(2)} ms per command${shell}`,
    );
    await s.dispose();
  }
}

preClean();
const ns = await createNetnsHost();
const demo = await startDemoFleet({ dir: join(dir, 'demo'), logger: silentLogger, traffic: false });
try {
  const sshd = await ns.startSshd({ logLevel: 'INFO' });
  const kh = join(ns.dir, 'known_hosts');
  writeFileSync(kh, knownHostsLine(sshd));
  const real = ConfigSchema.parse({ hosts: [{ label: 'sshd', ssh: { host: ns.addr, port: 22, user: 'root', identityFile: ns.clientKey }, knownHostsFile: kh }] }).hosts[0]!;
  await measure(`Debian sshd in netns ${ns.ns} (cat of a recorded nvidia-smi answer)`, real, `cat ${CAPTURE}`);
  const demoHost = ConfigSchema.parse({ hosts: [(demo.config as { hosts: unknown[] }).hosts[0]] }).hosts[0]!;
  await measure(`demo host ${demoHost.label} (simulated nvidia-smi; no POSIX shell)`, demoHost, QUERY);
} finally {
  await helper.dispose();
  await demo.dispose();
  await ns.dispose();
}
