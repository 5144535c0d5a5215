import { homedir } from 'node:os';
import { resolve } from 'node:path';
import { describeStorage, type CredentialPrompt, type FleetSnapshot } from '../../src-preload/contract/index.js';
import { AppError } from '../core/base/index.js';
import { loadConfigFile } from '../core/config/index.js';
import { findRunningConsole } from '../core/instance/index.js';
import { callRunningConsole } from './bridge-client.js';
import { callConsole } from './core-client.js';
import { CliErrorCode } from './errors.js';
import { EXIT, shown, type Output } from './output.js';
import { renderFaults, renderGpuProcesses, renderHostHealth } from './status-health.js';

// Audit reads go through the contract (`audit.verify`, `audit.list`): to the running console, else to a
// core started for the command on the data dir's database (which must exist: a read creates none).

export async function auditVerify(dataDir: string, output: Output): Promise<number> {
  const result = await callConsole(dataDir, 'audit.verify', {}, { requireDatabase: true });
  if (output.json) output.out(JSON.stringify(result));
  else if (result.ok) {
    output.out(
      result.head
        ? `audit chain OK: ${result.count} events, head #${result.head.seq} ${result.head.hash}`
        : 'audit chain OK: no events yet',
    );
  } else {
    output.out(
      `audit chain BROKEN at event #${result.brokenAt} (${result.reason}); ${result.count} events checked; ` +
        `last good: ${result.lastGood ? `#${result.lastGood.seq} ${result.lastGood.hash}` : 'none'}`,
    );
  }
  return result.ok ? EXIT.OK : EXIT.FAILED;
}

export async function auditList(dataDir: string, limit: number, output: Output): Promise<number> {
  const { events } = await callConsole(dataDir, 'audit.list', { limit }, { requireDatabase: true });
  if (output.json) output.out(JSON.stringify({ events }));
  else {
    for (const e of events) {
      output.out(`#${e.seq}  ${new Date(e.ts).toISOString()}  ${shown(e.type).padEnd(24)} ${shown(e.actor)}${e.target ? `  → ${shown(e.target)}` : ''}`);
    }
    if (events.length === 0) output.out('no audit events');
  }
  return EXIT.OK;
}

export async function configCheck(file: string, output: Output): Promise<number> {
  try {
    const config = await loadConfigFile(resolve(file), { home: homedir() });
    const services = config.hosts.reduce((n, h) => n + h.services.length, 0);
    if (output.json) output.out(JSON.stringify({ ok: true, file: resolve(file), hosts: config.hosts.length, services }));
    else output.out(`${file}: OK (${config.hosts.length} hosts, ${services} services)`);
    return EXIT.OK;
  } catch (err) {
    if (!(err instanceof AppError)) throw err;
    if (output.json) output.out(JSON.stringify({ ok: false, error: err.toJSON() }));
    else {
      output.out(shown(err.message));
      const issues = (err.details.issues as { path: string; line?: number; column?: number; message: string }[] | undefined) ?? [];
      for (const issue of issues.slice(1)) output.out(`  also line ${issue.line ?? '?'}: ${shown(issue.path)}: ${shown(issue.message)}`);
    }
    return EXIT.FAILED;
  }
}

function fmt(value: number | null, digits = 0, unit = ''): string {
  return value === null ? '—' : `${value.toFixed(digits)}${unit}`;
}

export function renderSnapshot(snapshot: FleetSnapshot, now: number = snapshot.at): string[] {
  const lines: string[] = [];
  for (const host of snapshot.hosts) {
    const via = host.transport ? `  via ${host.transport.kind}` : '';
    // The error's text, the GPU and model names come from the host and its servers.
    lines.push(`${shown(host.label)}  ${host.state}${host.lastError ? `  (${host.lastError.code}: ${shown(host.lastError.message)})` : ''}  ${shown(host.address)}${via}`);
    for (const gpu of host.gpus) {
      lines.push(
        `  gpu${gpu.index} ${shown(gpu.name)}  vram ${fmt(gpu.memoryUsedMiB)}/${fmt(gpu.memoryTotalMiB)} MiB  util ${fmt(gpu.utilizationPct, 0, '%')}  ` +
          `${fmt(gpu.powerW, 0, ' W')}  ${fmt(gpu.temperatureC, 0, '°C')}`,
      );
    }
    lines.push(...renderHostHealth(host, now), ...renderGpuProcesses(host), ...renderFaults(host));
    for (const s of host.services) {
      lines.push(
        `  ${shown(s.id)} ${shown(s.model)}  ${s.sleep}  tunnel ${s.tunnel.state}${s.tunnel.localUrl ? ` ${shown(s.tunnel.localUrl)}` : ''}  ` +
          `running ${fmt(s.requestsRunning)} waiting ${fmt(s.requestsWaiting)}  kv ${fmt(s.kvCachePct, 1, '%')}  ` +
          `gen ${fmt(s.generationTokensPerS, 1, ' tok/s')}${s.stale ? `  STALE (${s.staleReason ? shown(s.staleReason) : 'unknown'})` : ''}`,
      );
    }
  }
  return lines;
}

export async function status(dataDir: string, output: Output): Promise<number> {
  const snapshot = await callRunningConsole(dataDir, 'fleet.snapshot', {});
  if (output.json) {
    output.out(JSON.stringify(snapshot));
    return EXIT.OK;
  }
  for (const line of renderSnapshot(snapshot, Date.now())) output.out(line);
  // Which data folder is full (if one is), and what the console drops meanwhile; a console without the channel says nothing.
  const storage = await callRunningConsole(dataDir, 'storage.status', {}).catch(() => null);
  if (storage) output.out(`${storage.state === 'ok' ? 'storage' : 'STORAGE'}: ${shown(describeStorage(storage))}`);
  return EXIT.OK;
}

export async function hostsConnect(dataDir: string, label: string, connect: boolean, output: Output, prompt: PassphrasePrompt | null = ttyPassphrasePrompt()): Promise<number> {
  let result = await callRunningConsole(dataDir, connect ? 'hosts.connect' : 'hosts.disconnect', { label });
  // An encrypted key (either transport) is unlocked here when a person is at the terminal: asked without
  // echo, handed to the console's memory only, never to the shell history or a file.
  for (let tries = 0; connect && prompt && tries < 3; tries++) {
    const ask = await settledCredentialPrompt(dataDir, label);
    if (!ask) break;
    // A host's own question says it is the host's, in the host's words: GPU Console never asks for a passphrase that way.
    const question =
      ask.kind === 'prompt'
        ? `${shown(label)} (the host itself, not GPU Console) asks: ${shown(ask.text.trim())} `
        : `${ask.reason === 'incorrect' ? 'Incorrect passphrase. ' : ''}Passphrase for ${shown(ask.keyFile)} (host ${shown(label)}): `;
    const passphrase = await prompt(question);
    if (!passphrase) {
      // Ctrl-C / Ctrl-D at a host's own question: tell it no now, rather than let ssh wait for the timeout.
      if (ask.kind === 'prompt') result = await callRunningConsole(dataDir, 'hosts.declinePrompt', { label });
      break;
    }
    result = await callRunningConsole(dataDir, 'hosts.passphrase', { label, passphrase });
  }
  if (output.json) output.out(JSON.stringify(result));
  else output.out(`${shown(result.label)}: ${result.state}`);
  return EXIT.OK;
}

export type PassphrasePrompt = (question: string) => Promise<string>;

/** The host's passphrase prompt once its attempt has settled, or the question it asks now; null when none is asked. */
async function settledCredentialPrompt(dataDir: string, label: string): Promise<CredentialPrompt | null> {
  const end = Date.now() + 8_000;
  while (Date.now() < end) {
    const host = (await callRunningConsole(dataDir, 'fleet.snapshot', {})).hosts.find((h) => h.label === label);
    if (!host) return null;
    if (host.credentialPrompt) return host.credentialPrompt;
    if (host.state !== 'connecting' && host.state !== 'reconnecting') return null;
    await new Promise((r) => setTimeout(r, 150));
  }
  return null;
}

/** Reads a line from the terminal without echoing it; null when stdin is not a TTY (scripts, CI). */
function ttyPassphrasePrompt(): PassphrasePrompt | null {
  if (!process.stdin.isTTY || !process.stderr.isTTY) return null;
  return (question) =>
    new Promise((resolvePromise) => {
      const stdin = process.stdin;
      // Echo off before the question shows: what is typed after it is never printed.
      stdin.setRawMode(true);
      stdin.resume();
      process.stderr.write(question);
      let typed = '';
      const done = (value: string) => {
        stdin.setRawMode(false);
        stdin.pause();
        stdin.off('data', onData);
        process.stderr.write('\n');
        resolvePromise(value);
      };
      const onData = (d: Buffer) => {
        for (const ch of d.toString('utf8')) {
          if (ch === '\r' || ch === '\n') return done(typed);
          if (ch === '\u0003' || ch === '\u0004') return done(''); // Ctrl-C / Ctrl-D: not now
          if (ch === '\u007f' || ch === '\b') typed = typed.slice(0, -1);
          else typed += ch;
        }
      };
      stdin.on('data', onData);
    });
}

/** The running console's UI URL with its token: read from ready.json (0600), so only its own user gets it. */
/** The running console's UI URL (with its token), or with `proxy` its proxy's base URL (for OPENAI_BASE_URL, `bench run --target`). */
export function uiUrl(dataDir: string, output: Output, proxy = false): number {
  const running = findRunningConsole(dataDir);
  if (!running) throw new AppError(CliErrorCode.NO_RUNNING_CONSOLE, `no console is running on data dir ${dataDir} (start one with: gpu-console serve)`);
  if (proxy && !output.json && running.proxy === null) throw new AppError(CliErrorCode.NO_PROXY, `the console on data dir ${dataDir} has no proxy listening`);
  output.out(output.json ? JSON.stringify({ ui: running.ui, proxy: running.proxy }) : proxy ? running.proxy! : running.ui);
  return EXIT.OK;
}
