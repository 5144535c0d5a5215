import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ReportRequestSchema, type ReportProgress } from '../../../../src-preload/contract/index.js';
import { FakeClock, silentLogger } from '../../../../src-main/core/base/index.js';
import { hostCost, windowUsage } from '../../../../src-main/core/cost/index.js';
import { ReportRepository, ReportService, type ReportSources } from '../../../../src-main/core/report/index.js';
import type { PdfPrinter } from '../../../../src-main/core/ports.js';
import { openStore, type Store } from '../../../../src-main/core/store/index.js';
import { until } from '../../../helpers/until.js';

// Export failures: each is a clear, coded error, audited, and leaves no folder
// that could pass for a finished export.

const T0 = Date.UTC(2026, 10, 30, 8);
let dir: string;
let store: Store;
let clock: FakeClock;
let progress: ReportProgress[];
let liveCalls: number;
let agentSocket: string | undefined;

function sources(): ReportSources {
  return {
    now: () => clock.now(),
    actor: 'operator:test@test',
    console: { version: 'test', mode: 'web', demo: true },
    hosts: () => [{ label: 'h1', pricePerHourUsd: 1 }],
    liveChecks: async (label) => {
      liveCalls += 1;
      return {
        inventory: { label, address: 'ops@h1:22', jumpHost: null, connection: 'connected', liveError: null, hostKeyFingerprint: null, pricePerHourUsd: 1, gpus: [], services: [] },
        security: { host: label, checks: [] },
      };
    },
    offlineInventory: () => {
      throw new Error('not used');
    },
    auditEvents: () => [],
    auditCoverage: () => ({ fromSeq: null, toSeq: null, headSeq: null, headHash: null, chainVerified: true, chainProblem: null }),
    benchRuns: () => [],
    trafficEvaluation: () => ({ source: 'proxy traffic', fromMs: T0, toMs: T0 + 1, figures: [] }),
    actions: () => [],
    series: () => null,
    hostCost: (host, fromMs, toMs) =>
      hostCost({ host, pricePerHourUsd: 1, usage: windowUsage({ series: (q) => ({ host, range: q.range, fromMs, toMs, stepMs: 10_000, t: [], series: [], tiers: [] }), requestSpans: () => [], now: () => clock.now() }, host, fromMs, toMs) }),
    gateMarks: () => new Map(),
  };
}

function service(pdf: PdfPrinter | null = null): ReportService {
  return new ReportService({
    repo: new ReportRepository(store.db),
    audit: store.audit,
    clock,
    logger: silentLogger,
    sources,
    pdf,
    defaultDir: join(dir, 'reports'),
    principal: 'tester',
    db: store.db,
    emitProgress: (p) => progress.push(p),
    agentSocket: () => agentSocket,
    home: dir,
  });
}

const request = ReportRequestSchema.parse({ fromMs: T0 - 3_600_000, toMs: T0 });

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'gc-report-svc-'));
  clock = new FakeClock(T0);
  store = openStore({ file: ':memory:', clock });
  progress = [];
  liveCalls = 0;
  agentSocket = undefined;
});
afterEach(() => {
  store.close();
  rmSync(dir, { recursive: true, force: true });
});

const failures = () => store.audit.list({ type: 'report.export.failed' });

describe('report exports', () => {
  it('writes a complete folder, records it, audits it and reports progress to done', async () => {
    const r = await service().export({ request, formats: ['md', 'html'], sign: null }, 'operator:test@test');
    expect(readdirSync(r.dir).sort()).toEqual(['evidence.json', 'manifest.json', 'report.html', 'report.md']);
    expect(r.files.map((f) => f.name)).toEqual(['evidence.json', 'report.md', 'report.html']);
    expect(service().list(10).map((x) => x.id)).toEqual([r.id]);
    expect(store.audit.list({ type: 'report.exported' })[0]?.payload).toMatchObject({ evidenceSha256: r.evidenceSha256, signer: null });
    expect(progress.at(-1)).toMatchObject({ exportId: r.id, state: 'done', done: progress.at(-1)!.total });
    expect(readdirSync(join(dir, 'reports')).filter((n) => n.startsWith('.'))).toEqual([]);
  });

  it('an output folder that cannot be written fails first, names the folder, and runs nothing slow', async () => {
    writeFileSync(join(dir, 'a-file'), 'x');
    const out = join(dir, 'a-file', 'reports');
    await expect(service().export({ request, formats: ['md'], sign: null, outDir: out }, 'op')).rejects.toMatchObject({
      code: 'REPORT_OUTPUT_UNWRITABLE',
      message: expect.stringContaining(out),
    });
    expect(liveCalls).toBe(0);
    expect(failures()[0]?.payload).toMatchObject({ code: 'REPORT_OUTPUT_UNWRITABLE' });
    expect(progress.at(-1)).toMatchObject({ state: 'failed', message: expect.stringContaining('REPORT_OUTPUT_UNWRITABLE') });
  });

  it('a missing signing key and an encrypted key without its passphrase are refused before the evidence is built', async () => {
    await expect(service().export({ request, formats: ['md'], sign: { keyFile: join(dir, 'nope') } }, 'op')).rejects.toMatchObject({
      code: 'REPORT_SIGNING_KEY_UNREADABLE',
    });
    const key = join(dir, 'enc_ed25519');
    execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', 'secret words', '-f', key]);
    await expect(service().export({ request, formats: ['md'], sign: { keyFile: key } }, 'op')).rejects.toMatchObject({ code: 'REPORT_SIGNING_KEY_ENCRYPTED' });
    await expect(service().export({ request, formats: ['md'], sign: { keyFile: key, passphrase: 'wrong' } }, 'op')).rejects.toMatchObject({
      code: 'REPORT_SIGNING_KEY_PASSPHRASE_INCORRECT',
    });
    expect(liveCalls).toBe(0);
    expect(existsSync(join(dir, 'reports')) ? readdirSync(join(dir, 'reports')) : []).toEqual([]);
    // The passphrase never reaches the audit log.
    expect(JSON.stringify(store.audit.list({ limit: 100 }))).not.toContain('secret words');
    const ok = await service().export({ request, formats: ['md'], sign: { keyFile: key, passphrase: 'secret words' } }, 'op');
    expect(ok.signer).toMatch(/^SHA256:/);
    expect(readdirSync(ok.dir)).toContain('manifest.json.sig');
  });

  it('PDF without a printer is refused clearly; a printer failing midway leaves no folder behind', async () => {
    await expect(service(null).export({ request, formats: ['md', 'pdf'], sign: null }, 'op')).rejects.toMatchObject({ code: 'REPORT_PDF_UNAVAILABLE' });
    const broken: PdfPrinter = {
      printHtmlToPdf: async () => {
        throw Object.assign(new Error('chromium exited with 1'), { code: 'REPORT_PDF_FAILED' });
      },
    };
    await expect(service(broken).export({ request, formats: ['md', 'html', 'pdf'], sign: null }, 'op')).rejects.toThrow(/chromium exited/);
    expect(readdirSync(join(dir, 'reports'))).toEqual([]);
    expect(service().list(10)).toEqual([]);
  });

  it('refuses a second export while one runs', async () => {
    let release!: () => void;
    const slow: PdfPrinter = { printHtmlToPdf: () => new Promise((r) => (release = () => r(Buffer.from('%PDF-1.4\n')))) };
    const svc = service(slow);
    const first = svc.export({ request, formats: ['pdf'], sign: null }, 'op');
    // Until the first export reaches its printer (a fixed 50 ms missed it under load: release was unset).
    await until(() => typeof release === 'function', { what: 'the first export to reach the PDF printer' });
    await expect(svc.export({ request, formats: ['md'], sign: null }, 'op')).rejects.toMatchObject({ code: 'REPORT_EXPORT_RUNNING', retryable: true });
    release();
    await expect(first).resolves.toMatchObject({ files: expect.arrayContaining([expect.objectContaining({ name: 'report.pdf' })]) });
  });

  it('marks manual gates with who and when, audits each mark, and refuses unknown gates', () => {
    const g = service().setGate({ id: 'isolation.smoke', status: 'fail', note: 'port 8000 reachable from the VPC' }, 'operator:alice@web');
    expect(g).toMatchObject({ kind: 'manual', status: 'fail', markedBy: 'operator:alice@web', markedAt: T0 });
    expect(service().gates().find((x) => x.id === 'isolation.smoke')?.note).toBe('port 8000 reachable from the VPC');
    expect(store.audit.list({ type: 'report.gate.marked' })[0]).toMatchObject({ target: 'isolation.smoke', payload: { status: 'fail', previous: null } });
    expect(() => service().setGate({ id: 'no.such-gate', status: 'pass', note: '' }, 'op')).toThrow(expect.objectContaining({ code: 'REPORT_UNKNOWN_GATE' }));
  });

  it('signs with a key held by ssh-agent (ssh-keygen accepts it); no agent or no matching key is a clear error', async () => {
    await expect(service().export({ request, formats: ['md'], sign: { agent: true } }, 'op')).rejects.toMatchObject({ code: 'REPORT_SIGNING_AGENT_UNAVAILABLE' });
    agentSocket = join(dir, 'agent.sock');
    const agent = execFileSync('ssh-agent', ['-a', agentSocket, '-s'], { encoding: 'utf8' });
    const pid = /SSH_AGENT_PID=(\d+)/.exec(agent)?.[1];
    try {
      const env = { ...process.env, SSH_AUTH_SOCK: agentSocket };
      await expect(service().export({ request, formats: ['md'], sign: { agent: true } }, 'op')).rejects.toMatchObject({ code: 'REPORT_SIGNING_KEY_NOT_IN_AGENT' });
      for (const [type, bits] of [['ed25519', ''], ['rsa', '3072'], ['ecdsa', '384']] as const) {
        const key = join(dir, `agent_${type}`);
        execFileSync('ssh-keygen', ['-q', '-t', type, ...(bits ? ['-b', bits] : []), '-N', '', '-C', `shift-${type}`, '-f', key]);
        execFileSync('ssh-add', ['-q', key], { env });
      }
      await expect(service().export({ request, formats: ['md'], sign: { agent: true, key: 'nobody-here' } }, 'op')).rejects.toMatchObject({
        code: 'REPORT_SIGNING_KEY_NOT_IN_AGENT',
        message: expect.stringContaining('shift-rsa'),
      });
      for (const type of ['ed25519', 'rsa', 'ecdsa']) {
        clock.advance(1_000);
        const r = await service().export({ request, formats: ['md'], sign: { agent: true, key: `shift-${type}` } }, 'op');
        const fp = execFileSync('ssh-keygen', ['-l', '-f', join(dir, `agent_${type}.pub`)], { encoding: 'utf8' }).split(' ')[1];
        expect(r.signer).toBe(fp);
        const principal = readFileSync(join(r.dir, 'allowed_signers'), 'utf8').split(' ')[0]!;
        const v = spawnSync('ssh-keygen', ['-Y', 'verify', '-f', join(r.dir, 'allowed_signers'), '-I', principal, '-n', 'gpu-console-evidence', '-s', join(r.dir, 'manifest.json.sig')], {
          input: readFileSync(join(r.dir, 'manifest.json')),
        });
        expect(v.status, `${type}: ${v.stderr.toString()}`).toBe(0);
      }
    } finally {
      if (pid) process.kill(Number(pid));
    }
  });
});
