// `gpu-console actions …`: the lifecycle action queue of the RUNNING console,
// reached through its web bridge, with the same rules as the UI — approval
// needs the proposal's nonce, and restart / offload the host label typed.
import { parseArgs } from 'node:util';
import { ActionKindSchema, UpstreamKeySchema, decisionFacts, decisionSentence, type ActionView } from '../../../src-preload/contract/index.js';
import { callRunningConsole } from '../bridge-client.js';
import { resolveDataDir } from '../options.js';
import { EXIT, UsageError, shown, type Output } from '../output.js';
import type { CliCommand } from './types.js';

function parse(args: string[], extra: Record<string, { type: 'string' | 'boolean' }> = {}) {
  try {
    return parseArgs({ args, options: { 'data-dir': { type: 'string' }, json: { type: 'boolean', default: false }, ...extra }, allowPositionals: true, strict: true });
  } catch (err) {
    throw new UsageError((err as Error).message.replace(/\. To specify a positional argument.*$/s, ''));
  }
}

// A reason, an error, a step's text or body and what was observed may come from a host, a server or a
// policy fed by them, and a name from whoever typed it: each is shown within its line, escapes visible.
function line(a: ActionView): string {
  // The decision in the same words as the Actions view and reports (a rejection never reads "by <approver>").
  const who = a.decision ? `  ${shown(decisionSentence(decisionFacts(a)))}` : '';
  return `${a.id}  ${a.state.padEnd(9)} ${a.kind.padEnd(8)} ${shown(a.upstream).padEnd(20)} ${shown(a.proposer)}${who}${a.error ? `  — ${shown(a.error)}` : ''}`;
}

function details(a: ActionView, output: Output): void {
  output.out(line(a));
  output.out(`  reason:   ${shown(a.reason)}`);
  output.out(`  effect:   ${shown(a.expectedEffect)}`);
  // The split (through the proxy, direct tunnel clients at the engine) when the console knows it.
  const now = a.load?.summary ?? `${a.inFlight} in flight, ${a.queued} queued`;
  output.out(`  downtime: ~${(a.expectedDowntimeMs / 1000).toFixed(1)} s (${shown(a.downtimeBasis)}); now ${shown(now)}`);
  for (const s of a.steps) output.out(`  ${s.kind.padEnd(6)}  ${shown(s.text)}${s.body ? `  body: ${shown(s.body)}` : ''}`);
  if (a.nonce) output.out(`  approve:  gpu-console actions approve ${a.id} --nonce ${a.nonce}${a.requiresTypedLabel ? ` --type-label ${shown(a.label)}` : ''}`);
  for (const o of a.observed) output.out(`  observed: ${shown(o)}`);
}

const OUTCOME_WORD = { done: 'done', failed: 'failed', unknown: 'UNKNOWN', 'not-run': 'not run' } as const;

/** An interrupted action: each step's fate, and what Verify now saw (or the command for it). */
function interruption(a: ActionView, output: Output): void {
  const i = a.interruption;
  if (!i) return;
  for (const s of i.steps) output.out(`  ${OUTCOME_WORD[s.outcome].padEnd(8)} ${shown(s.text)}${s.outcome === 'unknown' ? '  (under way when the console stopped)' : ''}`);
  if (!i.check) output.out(`  check:   gpu-console actions verify-now ${a.id}`);
  else {
    output.out(`  checked: ${i.check.ok ? 'looks as promised' : 'does NOT look as promised'} (${shown(i.check.by)})`);
    for (const o of i.check.observed) output.out(`  observed: ${shown(o)}`);
  }
}

const list: CliCommand = {
  name: 'actions list',
  help: `  actions list          Pending proposals (with their nonces) and recent actions of the running console.`,
  async run(args, output) {
    const { values, positionals } = parse(args);
    if (positionals.length) throw new UsageError('usage: gpu-console actions list');
    const r = await callRunningConsole(resolveDataDir(values['data-dir']), 'actions.list', { limit: 50 });
    if (output.json) output.out(JSON.stringify(r));
    else if (r.actions.length === 0) output.out('no actions');
    else {
      for (const a of r.actions) {
        if (a.state === 'proposed') details(a, output);
        else output.out(line(a));
        interruption(a, output);
      }
    }
    return EXIT.OK;
  },
};

const propose: CliCommand = {
  name: 'actions propose',
  help: `  actions propose HOST/SERVICE wake|sleep|offload|restart [--reason TEXT]
                        Propose a lifecycle action; nothing happens until it is approved.`,
  async run(args, output) {
    const { values, positionals } = parse(args, { reason: { type: 'string' } });
    const usage = 'usage: gpu-console actions propose HOST/SERVICE wake|sleep|offload|restart [--reason TEXT]';
    if (positionals.length !== 2) throw new UsageError(usage);
    const upstream = UpstreamKeySchema.safeParse(positionals[0]);
    const kind = ActionKindSchema.safeParse(positionals[1]);
    if (!upstream.success) throw new UsageError(`"${positionals[0]}" is not HOST/SERVICE`);
    if (!kind.success) throw new UsageError(`action must be wake, sleep, offload or restart, got "${positionals[1]}"`);
    const reason = (values as { reason?: string }).reason;
    const r = await callRunningConsole(resolveDataDir(values['data-dir']), 'actions.propose', { upstream: upstream.data, kind: kind.data, ...(reason ? { reason } : {}) });
    if (output.json) output.out(JSON.stringify(r));
    else {
      if (r.collapsed) output.out('(the same action was already proposed; this joined it)');
      details(r.action, output);
    }
    return EXIT.OK;
  },
};

const approve: CliCommand = {
  name: 'actions approve',
  help: `  actions approve ID --nonce NONCE [--type-label HOST] [--name "DISPLAY NAME"]
                        Approve a proposal; restart and offload need --type-label with the host label.`,
  async run(args, output) {
    const { values, positionals } = parse(args, { nonce: { type: 'string' }, 'type-label': { type: 'string' }, name: { type: 'string' } });
    const v = values as { nonce?: string; 'type-label'?: string; name?: string; 'data-dir'?: string };
    if (positionals.length !== 1 || !v.nonce) throw new UsageError('usage: gpu-console actions approve ID --nonce NONCE [--type-label HOST] [--name NAME]');
    const r = await callRunningConsole(resolveDataDir(v['data-dir']), 'actions.approve', {
      id: positionals[0]!,
      nonce: v.nonce,
      ...(v['type-label'] !== undefined ? { typedLabel: v['type-label'] } : {}),
      ...(v.name ? { displayName: v.name } : {}),
    });
    output.out(output.json ? JSON.stringify(r) : line(r.action));
    return EXIT.OK;
  },
};

const reject: CliCommand = {
  name: 'actions reject',
  help: `  actions reject ID --nonce NONCE --reason TEXT
                        Reject a proposal, with the reason recorded.`,
  async run(args, output) {
    const { values, positionals } = parse(args, { nonce: { type: 'string' }, reason: { type: 'string' } });
    const v = values as { nonce?: string; reason?: string; 'data-dir'?: string };
    if (positionals.length !== 1 || !v.nonce || !v.reason) throw new UsageError('usage: gpu-console actions reject ID --nonce NONCE --reason TEXT');
    const r = await callRunningConsole(resolveDataDir(v['data-dir']), 'actions.reject', { id: positionals[0]!, nonce: v.nonce, reason: v.reason });
    output.out(output.json ? JSON.stringify(r) : line(r.action));
    return EXIT.OK;
  },
};

const withdraw: CliCommand = {
  name: 'actions withdraw',
  help: `  actions withdraw ID --nonce NONCE [--reason TEXT]
                        Take a waiting proposal back; it closes as withdrawn (audited).`,
  async run(args, output) {
    const { values, positionals } = parse(args, { nonce: { type: 'string' }, reason: { type: 'string' } });
    const v = values as { nonce?: string; reason?: string; 'data-dir'?: string };
    if (positionals.length !== 1 || !v.nonce) throw new UsageError('usage: gpu-console actions withdraw ID --nonce NONCE [--reason TEXT]');
    const r = await callRunningConsole(resolveDataDir(v['data-dir']), 'actions.withdraw', { id: positionals[0]!, nonce: v.nonce, ...(v.reason ? { reason: v.reason } : {}) });
    output.out(output.json ? JSON.stringify(r) : line(r.action));
    return EXIT.OK;
  },
};

const verifyNow: CliCommand = {
  name: 'actions verify-now',
  help: `  actions verify-now ID  An action the console stopped in the middle of (interrupted): read the service's
                        real state with the checks of its kind (reads only; audited). Nothing is resumed.`,
  async run(args, output) {
    const { values, positionals } = parse(args);
    if (positionals.length !== 1) throw new UsageError('usage: gpu-console actions verify-now ID');
    const r = await callRunningConsole(resolveDataDir(values['data-dir']), 'actions.verifyNow', { id: positionals[0]! });
    if (output.json) output.out(JSON.stringify(r));
    else {
      output.out(line(r.action));
      interruption(r.action, output);
    }
    return EXIT.OK;
  },
};

export const lifecycleCommands: CliCommand[] = [list, propose, approve, reject, withdraw, verifyNow];
