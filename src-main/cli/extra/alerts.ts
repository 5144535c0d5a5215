// `gpu-console alerts …`: the open alerts, acknowledging one, silencing a rule
// for a maintenance window, ending a silence, and a shift's history. Writes go
// through the contract, audited as operator:<user>@cli: list and ack to the
// running console (open alerts live there only); silences and the history to
// it, or to a core started for the command on the data dir (they are stored).
// --json prints the contract's objects.
import { alertFigureText, type Alert, type AlertHistory, type Silence } from '../../../src-preload/contract/index.js';
import { upstreamKey } from '../../core/upstream/index.js';
import { callRunningConsole } from '../bridge-client.js';
import { callConsole } from '../core-client.js';
import { resolveDataDir } from '../options.js';
import { EXIT, shown, type Output } from '../output.js';
import { ALERTS_USAGE, parseAlertsArgs, type AlertsArgs } from './alerts-args.js';
import type { CliCommand } from './types.js';

const hhmm = (ms: number): string => new Date(ms).toISOString().slice(0, 16).replace('T', ' ') + 'Z';

function span(ms: number | null): string {
  if (ms === null) return 'open';
  const min = Math.round(ms / 60_000);
  return min < 60 ? `${min} min` : `${Math.floor(min / 60)} h ${min % 60} min`;
}

const where = (a: Pick<Alert, 'host' | 'serviceId'>): string => shown(a.serviceId ? upstreamKey(a.host, a.serviceId) : a.host);

/** One alert: its severity, kind, where, since when, its message and figure, then who has it and what silences it. */
export function alertLines(a: Alert, silences: readonly Silence[]): string[] {
  const figure = alertFigureText(a);
  const lines = [`${a.severity.toUpperCase().padEnd(8)} ${a.kind.padEnd(19)} ${where(a).padEnd(24)} since ${hhmm(a.raisedAt)}  ${shown(a.message)}${figure ? ` (${shown(figure)})` : ''}`];
  lines.push(`         id ${shown(a.id)}`);
  if (a.incident) lines.push(`         part of incident ${shown(a.incident)} (pages through it)`);
  if (a.ack) lines.push(`         acknowledged by ${shown(a.ack.by)} at ${hhmm(a.ack.at)}${a.ack.note ? `: ${shown(a.ack.note)}` : ''}`);
  const s = a.silencedBy ? silences.find((x) => x.id === a.silencedBy) : undefined;
  if (a.silencedBy) lines.push(`         SILENCED by ${shown(a.silencedBy)}${s ? ` until ${hhmm(s.until)}: ${shown(s.reason)}` : ''}`);
  return lines;
}

export function silenceLine(s: Silence): string {
  const scope = [s.host, s.serviceId, s.model].filter((x) => x !== null).join('/') || 'every host';
  const state = s.endedAt !== null ? `ended ${hhmm(s.endedAt)} by ${shown(s.endedBy)}` : `until ${hhmm(s.until)}`;
  return `${shown(s.id)}  ${s.rule.padEnd(19)} ${shown(scope).padEnd(24)} ${state}  by ${shown(s.by)}: ${shown(s.reason)}`;
}

export function historyLines(h: AlertHistory): string[] {
  const lines = [`alerts from ${hhmm(h.fromMs)} to ${hhmm(h.toMs)}${h.truncated ? ' (cut at the limit)' : ''}`];
  if (h.alerts.length === 0) lines.push('  none');
  for (const a of h.alerts) {
    const who = a.ackBy ? `  ack ${shown(a.ackBy)}` : '';
    const silenced = a.silencedBy ? `  silenced by ${shown(a.silencedBy)}` : '';
    const incident = a.incident ? `  incident ${shown(a.incident)}` : '';
    lines.push(`  ${hhmm(a.raisedAt)}  ${span(a.durationMs).padEnd(12)} ${a.severity.padEnd(8)} ${a.kind.padEnd(19)} ${where(a).padEnd(24)} ${shown(a.message)}${who}${silenced}${incident}`);
  }
  lines.push('changes');
  if (h.changes.length === 0) lines.push('  none');
  for (const c of h.changes) lines.push(`  ${hhmm(c.at)}  ${shown(c.actor).padEnd(28)} ${shown(c.target ?? '').padEnd(24)} ${shown(c.summary)}`);
  lines.push('silences');
  if (h.silences.length === 0) lines.push('  none');
  for (const s of h.silences) lines.push(`  ${silenceLine(s)}`);
  return lines;
}

async function run(a: AlertsArgs, output: Output): Promise<number> {
  const dataDir = resolveDataDir(a.dataDir);
  const print = (json: unknown, human: () => string[]) => {
    if (output.json) output.out(JSON.stringify(json));
    else for (const l of human()) output.out(l);
  };
  switch (a.verb) {
    case 'list': {
      // Open alerts live in the running console only: without one, say so rather than print "none".
      const r = await callRunningConsole(dataDir, 'alerts.list', {});
      print(r, () => [
        ...(r.alerts.length === 0 ? ['no open alerts'] : r.alerts.flatMap((x) => alertLines(x, r.silences))),
        ...(r.silences.length === 0 ? [] : ['silences in force', ...r.silences.map((s) => `  ${silenceLine(s)}`)]),
      ]);
      return EXIT.OK;
    }
    case 'ack': {
      const r = await callRunningConsole(dataDir, 'alerts.ack', { id: a.id, ...(a.note !== undefined ? { note: a.note } : {}) });
      print(r, () => alertLines(r, []));
      return EXIT.OK;
    }
    case 'silence': {
      const { rule, host, serviceId, model, forMs, reason } = a;
      const input = { rule: rule as Silence['rule'], forMs, reason, ...(host ? { host } : {}), ...(serviceId ? { serviceId } : {}), ...(model ? { model } : {}) };
      const r = await callConsole(dataDir, 'alerts.silence', input);
      print(r, () => [`silenced: ${silenceLine(r)}`]);
      return EXIT.OK;
    }
    case 'unsilence': {
      const r = await callConsole(dataDir, 'alerts.unsilence', { id: a.id });
      print(r, () => [`ended: ${silenceLine(r)}`]);
      return EXIT.OK;
    }
    case 'history': {
      const r = await callConsole(
        dataDir,
        'alerts.history',
        { limit: a.limit ?? 500, ...(a.fromMs !== undefined ? { fromMs: a.fromMs } : {}), ...(a.host ? { host: a.host } : {}) },
        { requireDatabase: true },
      );
      print(r, () => historyLines(r));
      return EXIT.OK;
    }
  }
}

const alerts: CliCommand = {
  name: 'alerts',
  help: `  alerts [list]         Open alerts of the running console with who acknowledged them and the silence
                        that covers them, and the silences in force.
  alerts ack ID [--note TEXT]
                        Acknowledge an open alert: it stays open, repeats stop; an escalation to
                        critical pages again. Audited with who.
  alerts silence RULE|all [--host H] [--service S] [--model M] --for 2h --reason TEXT
                        Keep a rule from paging for a while (1m to 30d) on a host, service or model
                        (without --host: every host); its alerts are still listed and audited. Ends by
                        itself; audited with who and why.
  alerts unsilence ID   End a silence early.
  alerts history [--since 12h] [--host H] [--limit N]
                        A shift's handover: what fired, when, for how long, who acknowledged it, what
                        silenced it, and the changes made in between (default: the last 12 hours).`,
  async run(args, output) {
    if (args.includes('--help') || args.includes('-h')) {
      output.out(ALERTS_USAGE);
      return EXIT.OK;
    }
    return run(parseAlertsArgs(args, Date.now()), output);
  },
};

export const alertsCommands: CliCommand[] = [alerts];
