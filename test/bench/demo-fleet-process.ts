// The demo fleet in a process of its own for test/bench/telemetry-fleet.ts, in
// shapes `gpu-console demo-fleet --hosts N` does not offer (GPUs and services
// per host): that command's own code (its config file, ready line and signal
// handling) with synthetic hosts of the asked shape, so the console under
// measurement does not share a CPU account with the hosts it reads. Prints
// `GPU Console demo fleet ready config=<dir>/config.yaml hosts=N`; stops on
// SIGTERM or SIGINT.
//
//   node --import tsx test/bench/demo-fleet-process.ts <dir> <hosts> <gpusPerHost> <servicesPerHost> [traffic]
import { join } from 'node:path';
import { runDemoFleet } from '../../src-main/cli/extra/demo-fleet.js';
import { createOutput } from '../../src-main/cli/output.js';
import { syntheticProfiles } from '../../src-main/demo/index.js';

const [dir, hosts, gpus, services, traffic] = process.argv.slice(2);
if (!dir) throw new Error('usage: demo-fleet-process.ts <dir> <hosts> <gpusPerHost> <servicesPerHost> [traffic]');
const code = await runDemoFleet(
  {
    configFile: join(dir, 'config.yaml'),
    dataDir: dir,
    profiles: syntheticProfiles(Number(hosts ?? 64), { gpusPerHost: Number(gpus ?? 8), servicesPerHost: Number(services ?? 2) }),
    // Background clients (about 5 per service, straight to the simulators) make the figures move; off by default on a 2-core machine.
    traffic: traffic === 'traffic',
    logLevel: 'warn',
  },
  createOutput(false),
);
process.exit(code);
