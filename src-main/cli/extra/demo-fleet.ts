// `gpu-console demo-fleet`: the demo fleet as its own process, so that a
// console (`serve --config FILE`) reads it as it reads real hosts, through its
// config file and SSH, and a benchmark can measure the console alone. It keeps
// its keys and known_hosts in <data dir>/demo-fleet (0700, files 0600),
// writes the config (0600) once every host listens, prints a ready line, and
// stops on SIGINT or SIGTERM. One such process per folder: a second would
// rewrite the first's known_hosts.
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { stringify } from 'yaml';
import { AppError, createLogger, type LogLevel, type Logger } from '../../core/base/index.js';
import { parseConfig } from '../../core/config/index.js';
import { writeFileAtomically } from '../../core/ssh/index.js';
import { DEFAULT_DEMO_FAULTS, DEMO_FAULT_SYNTAX, DemoErrorCode, demoFaultsOf, startDemoFleet, syntheticProfiles, type DemoFault, type DemoFleet, type HostProfile } from '../../demo/index.js';
import { resolveDataDir } from '../options.js';
import { EXIT, UsageError, logLine, type Output } from '../output.js';
import { MAX_DEMO_HOSTS } from '../serve.js';
import type { CliCommand } from './types.js';

export interface DemoFleetCommandOptions {
  configFile: string;
  /** N synthetic hosts (8 GPUs, 2 services each); absent: the built-in three. */
  hosts?: number;
  /** Hosts of a shape --hosts does not give (a benchmark's GPUs and services per host); wins over `hosts`. */
  profiles?: readonly HostProfile[];
  dataDir: string;
  timeScale?: number;
  traffic: boolean;
  sshTransport?: 'builtin' | 'openssh' | 'auto';
  /** Fault knobs to start with; absent: the built-in fleet's defaults (none for --hosts N). */
  faults?: readonly DemoFault[];
  logLevel: LogLevel;
}

const USAGE = 'usage: gpu-console demo-fleet --write-config FILE [--hosts N] [--time-scale N] [--traffic] [--ssh-transport builtin|openssh|auto] [--fault SPEC]... [--data-dir DIR]';

/** The command line, checked: every bad value is a usage error naming its flag. */
export function parseDemoFleetArgs(args: string[]): DemoFleetCommandOptions | 'help' {
  let parsed;
  try {
    parsed = parseArgs({
      args,
      options: {
        'write-config': { type: 'string' },
        hosts: { type: 'string' },
        'time-scale': { type: 'string' },
        traffic: { type: 'boolean', default: false },
        'ssh-transport': { type: 'string' },
        'log-level': { type: 'string' },
        'data-dir': { type: 'string' },
        fault: { type: 'string', multiple: true },
        json: { type: 'boolean', default: false },
        help: { type: 'boolean', short: 'h', default: false },
      },
      allowPositionals: true,
      strict: true,
    });
  } catch (err) {
    throw new UsageError(`${(err as Error).message.replace(/\. To specify a positional argument.*$/s, '')}\n${USAGE}`);
  }
  const { values, positionals } = parsed;
  if (values.help) return 'help';
  if (positionals.length > 0) throw new UsageError(`demo-fleet takes no arguments, got "${positionals.join(' ')}"\n${USAGE}`);
  const file = values['write-config'];
  if (file === undefined || file.trim() === '') throw new UsageError(`--write-config FILE is required: where to write the config a console reads\n${USAGE}`);
  const hosts = values.hosts === undefined ? undefined : Number(values.hosts);
  if (hosts !== undefined && !(/^\d+$/.test(values.hosts!) && hosts >= 1 && hosts <= MAX_DEMO_HOSTS)) {
    throw new UsageError(`--hosts must be a whole number from 1 to ${MAX_DEMO_HOSTS}, got "${values.hosts}"`);
  }
  const rawScale = values['time-scale'];
  const timeScale = rawScale === undefined ? undefined : Number(rawScale);
  if (timeScale !== undefined && !(rawScale!.trim() !== '' && Number.isFinite(timeScale) && timeScale >= 1 && timeScale <= 10_000)) {
    throw new UsageError(`--time-scale must be a number from 1 to 10000, got "${rawScale}"`);
  }
  const transport = values['ssh-transport'];
  if (transport !== undefined && transport !== 'builtin' && transport !== 'openssh' && transport !== 'auto') {
    throw new UsageError(`--ssh-transport must be builtin, openssh or auto, got "${transport}"`);
  }
  const logLevel = values['log-level'] ?? 'warn';
  if (logLevel !== 'debug' && logLevel !== 'info' && logLevel !== 'warn' && logLevel !== 'error') {
    throw new UsageError(`--log-level must be debug, info, warn or error, got "${logLevel}"`);
  }
  let faults: DemoFault[] | undefined;
  try {
    faults = values.fault === undefined ? undefined : demoFaultsOf(values.fault, []);
  } catch (err) {
    throw new UsageError(`--fault: ${(err as Error).message}`);
  }
  return {
    configFile: resolve(file),
    ...(faults !== undefined ? { faults } : {}),
    ...(hosts !== undefined ? { hosts } : {}),
    dataDir: resolveDataDir(values['data-dir']),
    ...(timeScale !== undefined ? { timeScale } : {}),
    traffic: values.traffic,
    ...(transport !== undefined ? { sshTransport: transport } : {}),
    logLevel,
  };
}

/** Claims `dir` for this process; throws DEMO_FLEET_RUNNING while another live demo-fleet holds it. */
function claimFolder(dir: string): () => void {
  const pidFile = join(dir, 'demo-fleet.pid');
  let other: number | null = null;
  try {
    other = Number(readFileSync(pidFile, 'utf8').trim());
  } catch {
    // no pid file: the folder is free
  }
  if (other !== null && Number.isInteger(other) && other > 0 && other !== process.pid && isAlive(other)) {
    throw new AppError(DemoErrorCode.FLEET_RUNNING, `another demo fleet (pid ${other}) already uses ${dir}; stop it, or give this one another --data-dir`, {
      details: { pid: other, dir },
    });
  }
  writeFileSync(pidFile, `${process.pid}\n`, { mode: 0o600 });
  return () => rmSync(pidFile, { force: true });
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** The config file a console reads: the fleet's config as YAML, checked by the console's own parser before it is written. */
async function writeFleetConfig(fleet: DemoFleet, file: string): Promise<void> {
  const text =
    `# Written by \`gpu-console demo-fleet\` (pid ${process.pid}) at ${new Date().toISOString()}: ${fleet.hosts.length} simulated\n` +
    `# hosts listening on 127.0.0.1 of this machine. Rewritten at every start (the ports change).\n` +
    `# Use it with: gpu-console serve --config ${file}\n` +
    stringify(fleet.config);
  parseConfig(text, { file, home: homedir() });
  await writeFileAtomically(file, text);
}

/** Resolves once a signal asked to stop and the fleet is closed; a second signal later than a second exits at once. */
function untilStopped(stop: () => Promise<void>, logger: Logger, output: Output): Promise<number> {
  return new Promise<number>((resolveExit) => {
    let stoppingAt: number | null = null;
    const onSignal = (signal: string) => {
      if (stoppingAt !== null) {
        // One Ctrl-C can arrive twice (terminal and parent), as for serve.
        if (Date.now() - stoppingAt < 1_000) return;
        output.err(`gpu-console: ${signal} again, exiting now`);
        process.exit(EXIT.FAILED);
      }
      stoppingAt = Date.now();
      logger.info('stopping the demo fleet', { signal });
      stop().then(
        () => resolveExit(EXIT.OK),
        (err: unknown) => {
          output.err(`gpu-console: error while stopping the demo fleet: ${(err as Error).message}`);
          resolveExit(EXIT.FAILED);
        },
      );
    };
    process.on('SIGINT', () => onSignal('SIGINT'));
    process.on('SIGTERM', () => onSignal('SIGTERM'));
  });
}

export async function runDemoFleet(options: DemoFleetCommandOptions, output: Output): Promise<number> {
  const logger = createLogger({ level: options.logLevel, scope: 'gpu-console demo-fleet', write: logLine });
  const dir = join(options.dataDir, 'demo-fleet');
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const release = claimFolder(dir);
  let fleet: DemoFleet | undefined;
  try {
    fleet = await startDemoFleet({
      dir,
      logger,
      traffic: options.traffic,
      ...(options.timeScale !== undefined ? { timeScale: options.timeScale } : {}),
      ...(options.sshTransport ? { sshTransport: options.sshTransport } : {}),
      faults: options.faults ?? (options.profiles || options.hosts !== undefined ? [] : DEFAULT_DEMO_FAULTS),
      ...(options.profiles ? { profiles: options.profiles } : options.hosts !== undefined ? { profiles: syntheticProfiles(options.hosts, { labelPrefix: 'demo' }) } : {}),
    });
    await writeFleetConfig(fleet, options.configFile);
  } catch (err) {
    await fleet?.dispose();
    release();
    throw err;
  }
  const running = fleet;
  const stopped = untilStopped(
    async () => {
      await running.dispose();
      release();
    },
    logger,
    output,
  );
  // Ready only once the signals are ours, as for serve: a Ctrl-C sent on seeing this line must stop it cleanly.
  if (output.json) output.out(JSON.stringify({ event: 'ready', config: options.configFile, hosts: running.hosts.map((h) => h.label), pid: process.pid }));
  else output.out(`GPU Console demo fleet ready config=${options.configFile} hosts=${running.hosts.length} (Ctrl-C stops it)`);
  return stopped;
}

export const demoFleetCommands: CliCommand[] = [
  {
    name: 'demo-fleet',
    help: `  demo-fleet --write-config FILE [--hosts N] [--time-scale N] [--traffic] [--ssh-transport builtin|openssh|auto] [--fault SPEC]...
                        Run the demo fleet as its own process (the built-in three hosts, or N synthetic
                        ones of 8 GPUs and 2 services, 1-${MAX_DEMO_HOSTS}) and write FILE (0600), a config that
                        \`gpu-console serve --config FILE\` reads as a real fleet; --traffic plays its
                        applications' traffic straight to the simulators. Keys and known_hosts: <data dir>/demo-fleet.
                        Prints: GPU Console demo fleet ready config=FILE hosts=N. Stops on Ctrl-C / SIGTERM.
                        --fault SPEC (repeatable) sets a fault knob as it starts; without one the built-in
                        fleet starts with its own (tri-gpu: Xid 13 on GPU 2 and a leftover process holding
                        9.1 GiB there); --fault none starts clean. SPEC:
${DEMO_FAULT_SYNTAX.split('\n').map((l) => `                          ${l}`).join('\n')}`,
    async run(args, output) {
      const options = parseDemoFleetArgs(args);
      if (options === 'help') {
        output.out(`${USAGE}\n${demoFleetCommands[0]!.help}`);
        return EXIT.OK;
      }
      return runDemoFleet(options, output);
    },
  },
];
