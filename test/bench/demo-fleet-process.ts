// A demo fleet in its own process, for test/bench/telemetry-fleet.ts: the
// console under measurement must not share a CPU account with the simulated
// hosts it reads. Writes the fleet's config to <dir>/config.yaml, prints
// `READY <path>` and runs until its stdin closes.
//
//   node --import tsx test/bench/demo-fleet-process.ts <dir> <hosts> <gpusPerHost> <servicesPerHost> [traffic]
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startDemoFleet, syntheticProfiles } from '../../src-main/demo/index.js';

async function main(): Promise<void> {
  const [dir, hosts, gpus, services, traffic] = process.argv.slice(2);
  if (!dir) throw new Error('usage: demo-fleet-process.ts <dir> <hosts> <gpusPerHost> <servicesPerHost>');
  const fleet = await startDemoFleet({
    dir,
    profiles: syntheticProfiles(Number(hosts ?? 64), { gpusPerHost: Number(gpus ?? 8), servicesPerHost: Number(services ?? 2) }),
    // Background clients (about 5 per service) make the figures move; off by default on a 2-core machine.
    traffic: traffic === 'traffic',
  });
  const file = join(dir, 'config.yaml');
  // JSON is YAML.
  writeFileSync(file, JSON.stringify({ hosts: fleet.config.hosts }, null, 1));
  process.stdout.write(`READY ${file}\n`);
  process.stdin.resume();
  process.stdin.on('end', () => {
    void fleet.dispose().then(() => process.exit(0));
  });
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
