import { parseArgs } from 'node:util';
import { isAppError } from '../core/base/index.js';
import { auditList, auditVerify, configCheck, hostsConnect, status, uiUrl } from './commands.js';
import { parsePort, parsePositiveInt, resolveDataDir } from './options.js';
import { EXIT, UsageError, createOutput, shown, type Output } from './output.js';
import { MAX_DEMO_HOSTS, demoFaultFlags, serve } from './serve.js';
import { VERSION } from './version.js';
import { alertsCommands } from './extra/alerts.js';
import { benchCommands } from './extra/bench.js';
import { demoFleetCommands } from './extra/demo-fleet.js';
import { lifecycleCommands } from './extra/lifecycle.js';
import { logsCommands } from './extra/logs.js';
import { proxyCommands } from './extra/proxy.js';
import { captureCommands } from './extra/captures.js';
import { reportCommands } from './extra/report.js';
import { secretsCommands } from './extra/secrets.js';
import { sshCommands } from './extra/ssh.js';
import type { CliCommand } from './extra/types.js';

const EXTRA_COMMANDS: CliCommand[] = [...sshCommands, ...proxyCommands, ...captureCommands, ...secretsCommands, ...lifecycleCommands, ...logsCommands, ...benchCommands, ...reportCommands, ...alertsCommands, ...demoFleetCommands];

function findExtra(command: string | undefined, rest: string[]): { cmd: CliCommand; args: string[] } | null {
  if (!command) return null;
  const two = rest[0] ? EXTRA_COMMANDS.find((c) => c.name === `${command} ${rest[0]}`) : undefined;
  if (two) return { cmd: two, args: rest.slice(1) };
  const one = EXTRA_COMMANDS.find((c) => c.name === command);
  return one ? { cmd: one, args: rest } : null;
}

const BASE_HELP = `gpu-console ${VERSION} — the on-call console for self-hosted LLM inference

Usage: gpu-console <command> [options]

Commands:
  serve                 Run the console headless and serve its UI on 127.0.0.1.
      --demo              run the built-in demo fleet in this process (also the default when no
                          config file exists); \`demo-fleet\` runs it as a process of its own
      --demo-traffic on|off
                          simulated application traffic on the demo fleet (default on)
      --demo-time-scale N divide the demo fleet's sleep/wake/restart times by N (default 1)
      --demo-hosts N      a demo fleet of N synthetic hosts (1-128; 8 GPUs and 2 services each)
                          instead of the built-in three, for seeing and measuring scale
      --demo-ssh-transport builtin|openssh|auto
                          the SSH transport of the demo hosts (default auto: builtin); a config
                          file sets it with ssh.transport
      --demo-fault SPEC   a demo fault knob, repeatable (HOST:xid=N@gpuI, HOST:throttle@gpuI,
                          HOST:disk-full, HOST:ghost[=memory]@SERVICE, HOST:oom@SERVICE); without one
                          the built-in fleet starts with tri-gpu's Xid 13 and leftover process on
                          GPU 2; none starts clean (gpu-console demo-fleet --help lists the forms)
      --config FILE       config file (default: <data dir>/config.yaml)
      --ui-port N         UI port on 127.0.0.1 (default 0 = any free port)
      --proxy-port N      port of the local OpenAI-compatible proxy on 127.0.0.1 (default: config, else any free port)
      --ready-file FILE   also write {"ui","proxy","pid"} to FILE once ready
      --log-level LEVEL   debug | info | warn | error (default warn)
      --print-url         put the UI token in the ready line even when stdout is not a terminal
    Prints one line: GPU Console ready ui=<url> proxy=<url>. The UI URL carries its token only
    on a terminal or with --print-url (logs must not hold it); \`gpu-console url\` prints it.

  url [--proxy]         Print the running console's UI URL with its token (from <data dir>/ready.json);
                        --proxy: its proxy's base URL instead (OPENAI_BASE_URL, bench run --target).

  status                Show hosts, GPUs and model services of the running console, and each host's
                        health: disks (LOW below 10 GiB or 10 % free), RAM, swap, load, uptime and
                        reboot, GPU processes per GPU with the service each belongs to, what the
                        console flags with the command it suggests (never runs), and GPU faults
                        where read. --json: the contract's FleetSnapshot (HostView.health,
                        GpuView.processes/faults, HostView.gpuProcesses); unknown is null.
  hosts connect LABEL   Ask the running console to connect a host.
  hosts disconnect LABEL
                        Ask the running console to disconnect a host.
  audit verify          Check the audit log's hash chain; prints the head, or the first broken
                        event and exits 1.
  audit list [--limit N]
                        Print the newest audit events (default 20).
  config check FILE     Validate a config file; errors name the line and field.
@EXTRA@
  help                  Show this text.     version   Print the version.

Options every command takes:
  --data-dir DIR        data folder (default: $GPU_CONSOLE_DATA_DIR, else the platform's user-data folder)
  --json                machine-readable output

Commands find the running console through <data dir>/ready.json. status, hosts connect|disconnect|
trust|refuse|forget-key|reconnect, tunnels, actions, logs, secrets and report build need one; tokens, audit,
report list|verify and hosts import-ssh-config --apply --yes use it when it runs, else a core started
for that one command on the data dir. Either way every change is made and audited by the console's
core (actor operator:<user>@cli).
Exit codes: 0 success, 1 the check or action failed, 2 usage error.`;

export const HELP = BASE_HELP.replace('@EXTRA@\n', EXTRA_COMMANDS.map((c) => c.help.replace(/\n?$/, '\n')).join(''));

const COMMON = {
  'data-dir': { type: 'string' },
  json: { type: 'boolean', default: false },
  help: { type: 'boolean', short: 'h', default: false },
} as const;

function parse<T extends Record<string, { type: 'string' | 'boolean'; short?: string; default?: string | boolean }>>(args: string[], extra: T) {
  try {
    return parseArgs({ args, options: { ...COMMON, ...extra }, allowPositionals: true, strict: true });
  } catch (err) {
    throw new UsageError((err as Error).message.replace(/\. To specify a positional argument.*$/s, ''));
  }
}

export async function runCli(argv: string[], outputOverride?: Output): Promise<number> {
  const [command, ...rest] = argv;
  const wantsJson = argv.includes('--json');
  const output = outputOverride ?? createOutput(wantsJson);
  try {
    const extra = findExtra(command, rest);
    if (extra) return await extra.cmd.run(extra.args, output);
    switch (command) {
      case undefined:
      case 'help':
      case '--help':
      case '-h':
        output.out(HELP);
        return EXIT.OK;
      case 'version':
      case '--version':
        output.out(output.json ? JSON.stringify({ version: VERSION }) : VERSION);
        return EXIT.OK;
      case 'serve':
        return await serveCommand(rest, output);
      case 'url': {
        const { values, positionals } = parse(rest, { proxy: { type: 'boolean' } });
        if (values.help) return help(output);
        if (positionals.length > 0) throw new UsageError('url takes no arguments');
        return uiUrl(resolveDataDir(values['data-dir']), output, values.proxy === true);
      }
      case 'status': {
        const { values, positionals } = parse(rest, {});
        if (values.help) return help(output);
        if (positionals.length > 0) throw new UsageError('status takes no arguments');
        return await status(resolveDataDir(values['data-dir']), output);
      }
      case 'hosts': {
        const { values, positionals } = parse(rest, {});
        if (values.help) return help(output);
        const [verb, label] = positionals;
        if ((verb !== 'connect' && verb !== 'disconnect') || !label || positionals.length !== 2) {
          throw new UsageError('usage: gpu-console hosts connect|disconnect LABEL');
        }
        return await hostsConnect(resolveDataDir(values['data-dir']), label, verb === 'connect', output);
      }
      case 'audit': {
        const { values, positionals } = parse(rest, { limit: { type: 'string' } });
        if (values.help) return help(output);
        const dataDir = resolveDataDir(values['data-dir']);
        if (positionals[0] === 'verify' && positionals.length === 1) return await auditVerify(dataDir, output);
        if (positionals[0] === 'list' && positionals.length === 1) {
          return await auditList(dataDir, parsePositiveInt('--limit', values.limit, 1000) ?? 20, output);
        }
        throw new UsageError('usage: gpu-console audit verify | audit list [--limit N]');
      }
      case 'config': {
        const { values, positionals } = parse(rest, {});
        if (values.help) return help(output);
        if (positionals[0] === 'check' && positionals.length === 2) return await configCheck(positionals[1]!, output);
        throw new UsageError('usage: gpu-console config check FILE');
      }
      default:
        throw new UsageError(`unknown command "${command}" (see gpu-console --help)`);
    }
  } catch (err) {
    if (err instanceof UsageError) {
      // The CLI's own words (a usage text may run over lines); the output escapes any control character.
      output.err(`gpu-console: ${err.message}`);
      return EXIT.USAGE;
    }
    if (isAppError(err)) {
      if (output.json) output.out(JSON.stringify({ ok: false, error: err.toJSON() }));
      output.err(`gpu-console: ${err.code}: ${shown(err.message)}`);
      return EXIT.FAILED;
    }
    throw err;
  }
}

/** `gpu-console serve`: its flags checked here (exit 2 naming the flag), then the console started. */
async function serveCommand(rest: string[], output: Output): Promise<number> {
  const { values, positionals } = parse(rest, {
    demo: { type: 'boolean', default: false },
    'demo-traffic': { type: 'string' },
    'demo-time-scale': { type: 'string' },
    'demo-hosts': { type: 'string' },
    'demo-ssh-transport': { type: 'string' },
    'demo-fault': { type: 'string', multiple: true },
    config: { type: 'string' },
    'ui-port': { type: 'string' },
    'proxy-port': { type: 'string' },
    'ready-file': { type: 'string' },
    'log-level': { type: 'string' },
    'print-url': { type: 'boolean' },
  });
  if (values.help) return help(output);
  if (positionals.length > 0) throw new UsageError(`serve takes no arguments, got "${positionals.join(' ')}"`);
  const logLevel = values['log-level'] ?? 'warn';
  if (!['debug', 'info', 'warn', 'error'].includes(logLevel)) throw new UsageError(`--log-level must be debug, info, warn or error`);
  const demoTraffic = values['demo-traffic'] ?? 'on';
  if (demoTraffic !== 'on' && demoTraffic !== 'off') throw new UsageError(`--demo-traffic must be on or off, got "${demoTraffic}"`);
  const rawScale = values['demo-time-scale'];
  const demoTimeScale = rawScale === undefined ? undefined : Number(rawScale);
  if (demoTimeScale !== undefined && !(Number.isFinite(demoTimeScale) && demoTimeScale >= 1 && demoTimeScale <= 10_000)) {
    throw new UsageError(`--demo-time-scale must be a number from 1 to 10000, got "${rawScale}"`);
  }
  const rawHosts = values['demo-hosts'];
  const demoHosts = rawHosts === undefined ? undefined : Number(rawHosts);
  if (demoHosts !== undefined && !(Number.isInteger(demoHosts) && demoHosts >= 1 && demoHosts <= MAX_DEMO_HOSTS)) {
    throw new UsageError(`--demo-hosts must be a whole number from 1 to ${MAX_DEMO_HOSTS}, got "${rawHosts}"`);
  }
  const demoSshTransport = values['demo-ssh-transport'];
  if (demoSshTransport !== undefined && !['builtin', 'openssh', 'auto'].includes(demoSshTransport)) {
    throw new UsageError(`--demo-ssh-transport must be builtin, openssh or auto, got "${demoSshTransport}"`);
  }
  if (demoHosts !== undefined && values.config !== undefined) {
    throw new UsageError('--demo-hosts starts a demo fleet; it cannot be combined with --config');
  }
  const demoFaults = demoFaultFlags(values['demo-fault']);
  return serve(
    {
      demo: (values.demo ?? false) || demoHosts !== undefined,
      demoTraffic: demoTraffic === 'on',
      demoTimeScale,
      demoHosts,
      ...(demoSshTransport !== undefined ? { demoSshTransport: demoSshTransport as 'builtin' | 'openssh' | 'auto' } : {}),
      ...(demoFaults !== undefined ? { demoFaults } : {}),
      configFile: values.config ?? null,
      dataDir: resolveDataDir(values['data-dir']),
      uiPort: parsePort('--ui-port', values['ui-port']) ?? 0,
      proxyPort: parsePort('--proxy-port', values['proxy-port']),
      readyFile: values['ready-file'] ?? null,
      printUrl: values['print-url'],
      logLevel: logLevel as 'debug' | 'info' | 'warn' | 'error',
    },
    output,
  );
}

function help(output: Output): number {
  output.out(HELP);
  return EXIT.OK;
}
