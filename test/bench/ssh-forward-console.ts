// The console side of test/bench/ssh-forward.ts, in its own process (as the
// console runs in production, apart from the clients that use its tunnels):
// a FleetService with one host and one tunnel, probe/status/reconnect live.
// Prints `url <tunnel's public url> <its private socket>` once the tunnel is
// up (the public port is the gate operators and apps use; the private socket
// what the console's own proxy reaches), or `error <message>` if the fleet
// cannot build or bring it up; exits on SIGTERM. Commands on stdin:
//   status   the host and tunnel state, and the negotiated SSH cipher
//   trace    (with BENCH_TRACE=1) what this process did since the last
//            `trace`, as one JSON line: GC pauses, the fleet's own execs, HTTP
//            requests and channel opens, each tunnel packet sent and received,
//            event-loop delay; timestamps in epoch ms (performance.timeOrigin
//            based), so the bench can lay them beside its slow requests.
// Environment: BENCH_CONFIG (the config JSON), BENCH_POLL_MS (poll interval,
// default 1000 as in the app; 0: no poll rounds), BENCH_OPENSSH_DIR (the
// openssh transport's control folder), BENCH_COMMAND_SHELL=0 (openssh: an `ssh`
// process per command instead of the command shell), BENCH_TRACE=1, BENCH_CIPHER (an
// experiment: the ssh2 cipher list to offer, comma-separated, in place of the
// console's default).
import { createRequire } from 'node:module';
import { monitorEventLoopDelay, performance, PerformanceObserver } from 'node:perf_hooks';
import { createInterface } from 'node:readline';
import ssh2 from 'ssh2';
import { Pool } from 'undici';
import { silentLogger } from '../../src-main/core/base/index.js';
import { ConfigSchema } from '../../src-main/core/config/index.js';
import { FleetService, type FleetServiceOptions } from '../../src-main/core/fleet/index.js';
import { upstreamKey } from '../../src-main/core/upstream/index.js';

const epochMs = (t = performance.now()): number => performance.timeOrigin + t;

interface Trace {
  /** kind: perf_hooks' NODE_PERFORMANCE_GC_* (1 minor, 2 major, 4 incremental, 8 weak callbacks). */
  gc: Array<[startMs: number, durationMs: number, kind: number]>;
  exec: Array<[startMs: number, endMs: number]>;
  http: number[];
  /** When a tunnel channel was handed bytes to send (a request) and when it received bytes (an answer). */
  sent: number[];
  received: number[];
  /** direct-tcpip channel opens: the bench's own keep-alive connections open theirs before measuring, so these are the fleet's. */
  channels: number[];
}
let trace: Trace = { gc: [], exec: [], http: [], channels: [], sent: [], received: [] };
// Only under the bench's --trace: the loop-delay timer wakes the process every millisecond, itself a cost on the path measured.
const tracing = process.env['BENCH_TRACE'] === '1';
const loopDelay = monitorEventLoopDelay({ resolution: 1 });
if (tracing) {
  loopDelay.enable();
  new PerformanceObserver((list) => {
    for (const e of list.getEntries()) trace.gc.push([epochMs(e.startTime), e.duration, ((e as unknown as { detail?: { kind?: number } }).detail?.kind ?? 0)]);
  }).observe({ entryTypes: ['gc'] });
}

// Bench-only instrumentation of the ssh2 client the fleet uses: when its polling execs and opens channels, and which cipher it negotiated.
const proto = ssh2.Client.prototype as unknown as Record<string, (...args: unknown[]) => unknown>;
let negotiated = '?';
const execOrig = proto['exec']!;
proto['exec'] = function (this: unknown, ...args: unknown[]) {
  const start = epochMs();
  const cb = args[args.length - 1] as (err: Error | undefined, ch: NodeJS.EventEmitter | undefined) => void;
  args[args.length - 1] = (err: Error | undefined, ch: NodeJS.EventEmitter | undefined) => {
    if (tracing) ch?.once('close', () => trace.exec.push([start, epochMs()]));
    cb(err, ch);
  };
  return execOrig.apply(this, args);
};
// Per request and per packet, so installed only when tracing (each wrapper costs an allocation per call).
if (tracing) {
  // The fleet's own HTTP (scrapes, probes) through its services' upstream clients (an undici Pool each): when each request starts. The bench's requests come from another process.
  const dispatchOrig = Pool.prototype.dispatch;
  Pool.prototype.dispatch = function (this: Pool, ...args: Parameters<Pool['dispatch']>) {
    trace.http.push(epochMs());
    return dispatchOrig.apply(this, args);
  };
  // Where a request's time goes inside this process: the channel's write (request in from the client, out to SSH) and push (answer in from SSH).
  const channelProto = (createRequire(import.meta.url)('ssh2/lib/Channel.js') as { Channel: { prototype: Record<string, (...a: unknown[]) => unknown> } }).Channel.prototype;
  const writeOrig = channelProto['_write']!;
  channelProto['_write'] = function (this: unknown, ...args: unknown[]) {
    trace.sent.push(epochMs());
    return writeOrig.apply(this, args);
  };
  const pushOrig = channelProto['push']!;
  channelProto['push'] = function (this: unknown, ...args: unknown[]) {
    if (args[0] !== null) trace.received.push(epochMs());
    return pushOrig.apply(this, args);
  };
}
const forwardOrig = proto['forwardOut']!;
proto['forwardOut'] = function (this: unknown, ...args: unknown[]) {
  if (tracing) trace.channels.push(epochMs());
  return forwardOrig.apply(this, args);
};
const connectOrig = proto['connect']!;
proto['connect'] = function (this: NodeJS.EventEmitter, ...args: unknown[]) {
  const config = args[0] as { algorithms?: Record<string, unknown> };
  const cipher = process.env['BENCH_CIPHER'];
  if (cipher) config.algorithms = { ...config.algorithms, cipher: cipher.split(',') };
  if (wanted === 'openssh') {
    // A FleetService that ignores ssh.transport would measure ssh2 under the openssh row's name.
    process.stdout.write(`error the FleetService connected with ssh2 although ssh.transport is 'openssh'\n`);
    process.exit(0);
  }
  this.once('handshake', (n: { cs?: { cipher?: string } }) => (negotiated = n.cs?.cipher ?? '?'));
  return connectOrig.apply(this, args);
};

let fleet: FleetService;
/** The transport the config asks for. */
let wanted: string | undefined;
try {
  const raw = JSON.parse(process.env['BENCH_CONFIG'] ?? '{}') as { hosts: Array<{ ssh: Record<string, unknown> }> };
  wanted = raw.hosts[0]?.ssh['transport'] as string | undefined;
  let parsed = ConfigSchema.safeParse(raw);
  // A console from before ssh.transport: builtin is all it has, so the key is dropped rather than refused.
  if (!parsed.success && wanted === 'builtin') {
    delete raw.hosts[0]!.ssh['transport'];
    parsed = ConfigSchema.safeParse(raw);
  }
  if (!parsed.success) throw new Error(parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; '));
  const config = parsed.data;
  // 0: no poll rounds (an experiment); the interval is then a day.
  const pollMs = Number(process.env['BENCH_POLL_MS'] ?? 1000);
  const options: FleetServiceOptions = { config, logger: silentLogger, pollIntervalMs: pollMs > 0 ? pollMs : 86_400_000 };
  const controlDir = process.env['BENCH_OPENSSH_DIR'];
  if (controlDir) options.openssh = { controlDir };
  // The openssh session's own option (OpenSshSessionOptions.commandShell), passed through the fleet's sshOptions as the factory spreads them.
  if (process.env['BENCH_COMMAND_SHELL'] === '0') options.sshOptions = { commandShell: false } as FleetServiceOptions['sshOptions'];
  fleet = new FleetService(options);
  fleet.start();
} catch (err) {
  process.stdout.write(`error ${String((err as Error).message ?? err).replace(/\s+/g, ' ').slice(0, 300)}\n`);
  process.exit(0);
}
const label = fleet.snapshot().hosts[0]!.label;
// Read the snapshot rather than wait for a tick: with polling off (BENCH_POLL_MS=0) the tunnel comes up on the probe run after connect, with no tick.
const announce = setInterval(() => {
  const h = fleet.snapshot().hosts[0]!;
  if (h.services[0]?.tunnel.state !== 'up') return;
  clearInterval(announce);
  const end = fleet.upstream(upstreamKey(label, h.services[0].id)).endpoint;
  const socketPath = end.kind === 'tunnel' ? end.socketPath : null;
  process.stdout.write(`url ${h.services[0].tunnel.localUrl} ${socketPath}\n`);
}, 20);
createInterface({ input: process.stdin }).on('line', (line) => {
  const cmd = line.trim();
  if (cmd === 'status') {
    const h = fleet.snapshot().hosts[0]!;
    const t = h.services[0]!.tunnel;
    const why = h.state === 'connected' ? '' : ` error=${JSON.stringify((h as { lastError?: { message?: string } | null }).lastError?.message ?? '')}`;
    process.stdout.write(
      `status host=${h.state} tunnel=${t.state} probe=${t.lastProbe?.ok ? 'ok' : 'failing'} probeLatencyMs=${t.lastProbe?.latencyMs ?? '-'} gpus=${h.gpus.length}${h.gpuStale ? ` (stale: ${h.gpuStaleReason ?? '?'})` : ''} cipher=${negotiated} commands=${JSON.stringify(h.transport?.commands ?? '')}${why}\n`,
    );
  } else if (cmd === 'trace') {
    const out = { ...trace, loopDelayP99Ms: loopDelay.percentile(99) / 1e6, loopDelayMaxMs: loopDelay.max / 1e6 };
    trace = { gc: [], exec: [], http: [], channels: [], sent: [], received: [] };
    loopDelay.reset();
    process.stdout.write(`trace ${JSON.stringify(out)}\n`);
  }
});
process.on('SIGTERM', () => {
  void fleet.dispose().then(() => process.exit(0));
});
