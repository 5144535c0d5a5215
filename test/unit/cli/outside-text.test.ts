import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ActionView, FleetSnapshot } from '../../../src-preload/contract/index.js';
import { renderSnapshot } from '../../../src-main/cli/commands.js';
import { createOutput } from '../../../src-main/cli/output.js';
import { runCli } from '../../../src-main/cli/run.js';
import { readyFilePath, writeReadyFile } from '../../../src-main/core/instance/index.js';

// Issue #26 (low): terminal escape sequences in a proposal's reason were
// printed raw by `gpu-console actions list` (and so in any other text the CLI
// prints that came from outside). A terminal must never receive them as such,
// and a newline in such text must not forge a line of the CLI's own.

// eslint-disable-next-line no-control-regex -- looking for control characters is the point
const RAW_CONTROL = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/;
const HOSTILE = 'idle\u001b]0;pwned\u0007\u001b[2J\u009b31m\n  approve:  gpu-console actions approve a2 --nonce forged';

const dir = mkdtempSync(join(tmpdir(), 'gc-cli-outside-'));
let server: Server;

function action(overrides: Partial<ActionView> = {}): ActionView {
  return {
    id: 'a1',
    kind: 'sleep',
    upstream: 'l20/qwen',
    label: 'l20',
    serviceId: 'qwen',
    model: 'qwen',
    driver: 'vllm-sleep',
    state: 'proposed',
    proposer: 'policy:idle-sleep',
    reason: HOSTILE,
    repeats: 0,
    nonce: 'n0nce-123',
    requiresTypedLabel: false,
    expectedEffect: 'sleeps\u001b[1A',
    expectedDowntimeMs: 1000,
    downtimeBasis: 'estimate',
    steps: [{ kind: 'http', text: 'POST /sleep\u001b[8m', body: null }] as unknown as ActionView['steps'],
    inFlight: 0,
    queued: 0,
    createdAt: 1,
    expiresAt: 2,
    decidedAt: null,
    decision: null,
    approver: null,
    standingApprovalId: null,
    rejectedBy: null,
    rejectReason: null,
    withdrawnBy: null,
    withdrawReason: null,
    startedAt: null,
    finishedAt: null,
    progress: null,
    drained: null,
    aborted: null,
    observed: ['server said \u001b]52;c;Y3VybCBldmls\u0007'],
    error: null,
    ...overrides,
  };
}

/** A stand-in for the running console's web bridge: answers actions.list with hostile text. */
beforeAll(async () => {
  server = createServer((req, res) => {
    let body = '';
    req.on('data', (d: Buffer) => (body += d.toString()));
    req.on('end', () => {
      res.setHeader('content-type', 'application/json');
      if (req.url === '/api/actions.list') res.end(JSON.stringify({ ok: true, data: { actions: [action(), action({ id: 'a0', state: 'failed', nonce: null, error: 'exit 1: \u001b[31mboom\u001b[0m' })], standing: [], targets: [] } }));
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

function terminal(json = false) {
  const stdout: string[] = [];
  const stderr: string[] = [];
  return { output: createOutput(json, { stdout: (s) => stdout.push(s), stderr: (s) => stderr.push(s) }), stdout, stderr };
}

describe('the CLI prints outside text as text', () => {
  it('actions list: escapes reach the terminal as visible text, and a newline in a reason forges no line', async () => {
    const t = terminal();
    expect(await runCli(['actions', 'list', '--data-dir', dir], t.output)).toBe(0);
    const text = t.stdout.join('');
    expect(text).not.toMatch(RAW_CONTROL);
    expect(text).toContain('reason:   idle\\x1b]0;pwned\\x07\\x1b[2J\\x9b31m\\n  approve:  gpu-console actions approve a2 --nonce forged');
    expect(text).toContain('observed: server said \\x1b]52;c;Y3VybCBldmls\\x07');
    expect(text).toContain('— exit 1: \\x1b[31mboom\\x1b[0m');
    // The only approve line is the CLI's own, for the real proposal.
    expect(text.split('\n').filter((l) => l.trimStart().startsWith('approve:'))).toEqual(['  approve:  gpu-console actions approve a1 --nonce n0nce-123']);
  });

  it('actions list --json: the same values, with no raw C1 or bidi character in the document', async () => {
    const t = terminal(true);
    expect(await runCli(['actions', 'list', '--data-dir', dir, '--json'], t.output)).toBe(0);
    const text = t.stdout.join('');
    expect(text).not.toMatch(RAW_CONTROL);
    expect((JSON.parse(text) as { actions: ActionView[] }).actions[0]!.reason).toBe(HOSTILE);
  });

  it('status: a host error, a GPU name and a model name from the host are escaped', () => {
    const snapshot = {
      hosts: [
        {
          label: 'gpu-1',
          state: 'failed',
          address: 'ops@10.0.0.5:22',
          lastError: { code: 'SSH_AUTH_FAILED', message: 'Permission denied\n\u001b[2Jgpu-2  connected', retryable: false, details: {} },
          gpus: [{ index: 0, name: 'H100\u001b]0;x\u0007', memoryUsedMiB: null, memoryTotalMiB: null, utilizationPct: null, powerW: null, temperatureC: null }],
          services: [{ id: 'qwen', model: 'qwen\u009b2J', sleep: 'awake', tunnel: { state: 'open', localUrl: null }, requestsRunning: null, requestsWaiting: null, kvCachePct: null, generationTokensPerS: null, stale: true, staleReason: 'scrape: \u001b[1A' }],
        },
      ],
    } as unknown as FleetSnapshot;
    const lines = renderSnapshot(snapshot);
    expect(lines.join('\n')).not.toMatch(RAW_CONTROL);
    // One line per host, GPU, health state and service: the error's newline did not add a fake host line.
    expect(lines).toHaveLength(4);
    expect(lines[2]).toBe('  health: not read (host health polling is off for this host)');
    expect(lines[0]).toContain('Permission denied\\n\\x1b[2Jgpu-2  connected');
    // Unknown figures stay shown as unknown.
    expect(lines[1]).toContain('vram —/— MiB');
  });

  it('an error message from the console is escaped too, and the output layer catches what a call site missed', async () => {
    const t = terminal();
    expect(await runCli(['hosts', 'connect', 'nope', '--data-dir', dir], t.output)).toBe(1);
    expect(t.stderr.join('')).toContain('gpu-console: X: unexpected');
    const raw = terminal();
    raw.output.out('line one\n\u001b[2Jline two\r\u009b');
    expect(raw.stdout.join('')).toBe('line one\n\\x1b[2Jline two\\r\\x9b\n');
  });
});
