// Benchmark (prints figures; not a test): what one remote command costs on
// each SSH transport, through the same demo host (an ssh2 SSH server in this
// process answering `nvidia-smi` as a real host would). The console polls
// GPUs with one such command per host per second, so this is the transport's
// standing cost, beside the per-request cost of tunnels in ssh-forward.ts.
// Printed per transport: latency p50/p99, the console process's CPU per
// command, and (openssh) the CPU of the `ssh` mux clients it starts (from
// /proc/self/stat cutime+cstime, Linux).
//   npx tsx test/bench/ssh-exec.ts [--count N]
import { readFileSync } from 'node:fs';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { silentLogger } from '../../src-main/core/base/index.js';
import { ConfigSchema } from '../../src-main/core/config/index.js';
import { startDemoFleet } from '../../src-main/core/demo/index.js';
import { MemoryTrustStore, OpenSshHelperServer, OpenSshProbe, OpenSshSession, SshConnection, type SshSession } from '../../src-main/core/ssh/index.js';

const { values } = parseArgs({ options: { count: { type: 'string', default: '200' } } });
const N = Number(values.count);
const QUERY = 'nvidia-smi --query-gpu=index,name,memory.used,memory.total,utilization.gpu,power.draw,temperature.gpu --format=csv,noheader,nounits';

function childrenCpuMs(): number {
  const f = readFileSync('/proc/self/stat', 'utf8').split(') ')[1]!.split(' ');
  return (Number(f[13]) + Number(f[14])) * 10; // cutime + cstime, USER_HZ = 100
}

const dir = mkdtempSync(join(tmpdir(), 'gc-bench-exec-'));
const demo = await startDemoFleet({ dir: join(dir, 'demo'), logger: silentLogger, traffic: false });
const host = ConfigSchema.parse({ hosts: [(demo.config as { hosts: unknown[] }).hosts[0]] }).hosts[0]!;
const helper = new OpenSshHelperServer(join(dir, 'ssh'));
const sessions: [string, SshSession][] = [
  ['builtin', new SshConnection(host, { services: { trustStore: new MemoryTrustStore() } })],
  ['openssh', new OpenSshSession(host, { controlDir: join(dir, 'ssh'), helper, probe: new OpenSshProbe(), services: { trustStore: new MemoryTrustStore() } })],
];
console.log(`one GPU query (${N} per transport, after 20 warm-up) on the demo host ${host.label}`);
for (const [name, s] of sessions) {
  await s.connect();
  for (let i = 0; i < 20; i++) await s.exec(QUERY);
  const children0 = childrenCpuMs();
  const cpu0 = process.cpuUsage();
  const lat: number[] = [];
  for (let i = 0; i < N; i++) {
    const t = performance.now();
    await s.exec(QUERY);
    lat.push(performance.now() - t);
  }
  const cpu = process.cpuUsage(cpu0);
  const children = childrenCpuMs() - children0;
  lat.sort((a, b) => a - b);
  const pct = (p: number) => lat[Math.min(N - 1, Math.floor((p / 100) * N))]!.toFixed(2);
  console.log(
    `  ${name.padEnd(8)} latency p50 ${pct(50)} ms p99 ${pct(99)} ms | console CPU ${((cpu.user + cpu.system) / N / 1000).toFixed(2)} ms per command` +
      ` | ssh client processes ${(children / N).toFixed(2)} ms per command`,
  );
  await s.dispose();
}
await helper.dispose();
await demo.dispose();
