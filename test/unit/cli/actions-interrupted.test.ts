import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ActionView } from '../../../src-preload/contract/index.js';
import { createOutput } from '../../../src-main/cli/output.js';
import { runCli } from '../../../src-main/cli/run.js';
import { readyFilePath, writeReadyFile } from '../../../src-main/core/instance/index.js';

// `gpu-console actions list` shows an interrupted action's steps with their
// fate and the command to check it; `actions verify-now ID` asks the running
// console for the check and prints what it saw (issue #33 item 2).

const dir = mkdtempSync(join(tmpdir(), 'gc-cli-interrupted-'));
let server: Server;
const asked: string[] = [];

const steps = [
  { kind: 'drain', text: 'drain tri-gpu/gemma', outcome: 'done' },
  { kind: 'ssh', text: 'sudo systemctl restart vllm-gemma', outcome: 'unknown' },
  { kind: 'verify', text: 'verify (vllm-sleep): health', outcome: 'not-run' },
] as const;
const action = (check: NonNullable<ActionView['interruption']>['check']): ActionView =>
  ({
    id: 'act_interrupted1', kind: 'restart', upstream: 'tri-gpu/gemma', label: 'tri-gpu', serviceId: 'gemma', model: 'g', driver: 'ssh-command', state: 'interrupted',
    proposer: 'operator:dana@web', reason: 'r', repeats: 0, nonce: null, requiresTypedLabel: true, expectedEffect: 'e', expectedDowntimeMs: 1, downtimeBasis: 'b',
    steps: steps.map((s) => ({ kind: s.kind, text: s.text, body: null })), inFlight: 0, queued: 0, createdAt: 1, expiresAt: 2, decidedAt: 1, decision: 'approved',
    approver: { osUser: 'dana', displayName: 'dana', via: 'web' }, standingApprovalId: null, rejectedBy: null, rejectReason: null, withdrawnBy: null, withdrawReason: null,
    startedAt: 1, finishedAt: 3, progress: null, drained: 0, aborted: 0, observed: [], error: 'the console stopped while this action was running; it was not resumed',
    interruption: { detectedAt: 3, wasState: 'running', lastProgress: 'step 1/1', steps: [...steps], check },
  }) as ActionView;

beforeAll(async () => {
  server = createServer((req, res) => {
    let body = '';
    req.on('data', (d: Buffer) => (body += d.toString()));
    req.on('end', () => {
      asked.push(`${req.url} ${body}`);
      res.setHeader('content-type', 'application/json');
      if (req.url === '/api/actions.list') res.end(JSON.stringify({ ok: true, data: { actions: [action(null)], standing: [], targets: [] } }));
      else if (req.url === '/api/actions.verifyNow') res.end(JSON.stringify({ ok: true, data: { action: action({ at: 5, by: 'operator:dana@cli', ok: true, observed: ['health: HTTP 200'] }) } }));
      else res.end(JSON.stringify({ ok: false, error: { code: 'X', message: 'unexpected', retryable: false, details: {} } }));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  writeReadyFile(readyFilePath(dir), { ui: `http://127.0.0.1:${(server.address() as AddressInfo).port}/#token=t0k3n`, proxy: null, pid: process.pid });
});
afterAll(() => {
  server?.close();
  rmSync(dir, { recursive: true, force: true });
});

const terminal = () => {
  const stdout: string[] = [];
  return { output: createOutput(false, { stdout: (s) => stdout.push(s), stderr: () => undefined }), text: () => stdout.join('') };
};

describe('interrupted actions in the CLI', () => {
  it('actions list names each step’s fate and the command that checks the service', async () => {
    const t = terminal();
    expect(await runCli(['actions', 'list', '--data-dir', dir], t.output)).toBe(0);
    expect(t.text()).toContain('  done     drain tri-gpu/gemma');
    expect(t.text()).toContain('  UNKNOWN  sudo systemctl restart vllm-gemma  (under way when the console stopped)');
    expect(t.text()).toContain('  not run  verify (vllm-sleep): health');
    expect(t.text()).toContain('  check:   gpu-console actions verify-now act_interrupted1');
  });

  it('actions verify-now asks the running console and prints what the check saw', async () => {
    const t = terminal();
    expect(await runCli(['actions', 'verify-now', 'act_interrupted1', '--data-dir', dir], t.output)).toBe(0);
    expect(asked.at(-1)).toBe('/api/actions.verifyNow {"id":"act_interrupted1"}');
    expect(t.text()).toContain('checked: looks as promised (operator:dana@cli)');
    expect(t.text()).toContain('observed: health: HTTP 200');
    expect(await runCli(['actions', 'verify-now', '--data-dir', dir], terminal().output)).toBe(2);
  });
});
