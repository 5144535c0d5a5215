// The console side of test/bench/ssh-forward.ts, in its own process (as the
// console runs in production, apart from the clients that use its tunnels):
// a FleetService with one host and one tunnel, probe/status/reconnect live.
// Prints `url <tunnel url>` once the tunnel is up; on "status\n" from stdin
// prints the host and tunnel state; exits on SIGTERM.
import { createInterface } from 'node:readline';
import { silentLogger } from '../../src-main/core/base/index.js';
import { ConfigSchema } from '../../src-main/core/config/index.js';
import { FleetService } from '../../src-main/core/fleet/index.js';

const config = ConfigSchema.parse(JSON.parse(process.env['BENCH_CONFIG'] ?? '{}'));
const fleet = new FleetService({ config, logger: silentLogger, pollIntervalMs: 1000 });
fleet.start();
const label = config.hosts[0]!.label;
const serviceId = config.hosts[0]!.services[0]!.id;
let announced = false;
fleet.onDidTick((s) => {
  if (!announced && s.hosts[0]?.services[0]?.tunnel.state === 'up') {
    announced = true;
    process.stdout.write(`url ${fleet.tunnelUrl(label, serviceId)}\n`);
  }
});
createInterface({ input: process.stdin }).on('line', (line) => {
  if (line.trim() !== 'status') return;
  const h = fleet.snapshot().hosts[0]!;
  const t = h.services[0]!.tunnel;
  process.stdout.write(`status host=${h.state} tunnel=${t.state} probe=${t.lastProbe?.ok ? 'ok' : 'failing'} probeLatencyMs=${t.lastProbe?.latencyMs ?? '-'}\n`);
});
process.on('SIGTERM', () => {
  void fleet.dispose().then(() => process.exit(0));
});
