import { execFileSync, spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Api } from '../../src-main/core/api.js';
import type { App } from '../../src-main/core/app.js';
import { ChromiumPdfPrinter } from '../../src-main/web/pdf-printer.js';
import {
  BenchScenarioSchema,
  EvidenceSchema,
  type ActionView,
  type BenchRun,
  type Evidence,
  type ReportExport,
} from '../../src-preload/contract/index.js';
import { openPage } from '../helpers/browser.js';
import { assertBuilt, runCliProcess } from '../helpers/console-process.js';
import { startDemoConsole, type DemoConsole } from '../helpers/demo-console.js';
import { until } from '../helpers/until.js';

// A scripted shift on the demo fleet — a benchmark, an alert it causes, a
// sleep and a wake approved by a person, a manual gate marked — then one
// signed export. The report must hold exactly those facts; OpenSSH's
// ssh-keygen must accept the signature and refuse it after one byte changes;
// `gpu-console report verify` must flag an altered audit row; no planted
// secret may appear in any file; the HTML must render and print.

const HOST = 'l20-poc';
const UPSTREAM = 'l20-poc/qwen';
const PASSPHRASE = 'correct horse battery staple 7731';
const PLANTED_SECRET = 'sk-planted-UPSTREAM-7f3a9c1e5b';

let app: App;
let c: DemoConsole | undefined;
let api: Api;
let dataDir: string;
let work: string;
let keyFile: string;
let token: string;
let startedAt: number;
let run: BenchRun;
let slept: ActionView;
let woke: ActionView;
let exported: ReportExport;

async function call<T>(channel: string, input: unknown): Promise<T> {
  const r = await api.invoke(channel, input, { caller: 'test' });
  if (!r.ok) throw Object.assign(new Error(`${channel}: ${r.error.code} ${r.error.message}`), { code: r.error.code });
  return r.data as T;
}

const service = () => app.fleet.snapshot().hosts.find((h) => h.label === HOST)?.services.find((s) => s.id === 'qwen');

async function approve(kind: 'sleep' | 'wake'): Promise<ActionView> {
  const { action } = await call<{ action: ActionView }>('actions.propose', { upstream: UPSTREAM, kind, reason: `scripted ${kind}` });
  await call('actions.approve', { id: action.id, nonce: action.nonce, displayName: 'Dana Night-Shift' });
  return app.lifecycle.service.settled(action.id);
}

beforeAll(async () => {
  assertBuilt();
  work = mkdtempSync(join(tmpdir(), 'gc-report-'));
  dataDir = join(work, 'data');
  keyFile = join(work, 'signing_ed25519');
  execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', PASSPHRASE, '-C', 'night-shift', '-f', keyFile]);
  c = await startDemoConsole({
    dataDir,
    fleet: { timeScale: 100, decodeSpeedFactor: 4 },
    proxyPort: 0,
    pollIntervalMs: 200,
    pdfPrinter: new ChromiumPdfPrinter(),
    alertThresholds: { sustainMs: 1_000, clearMs: 1_000 },
  });
  app = c.app;
  api = c.api;
  startedAt = Date.now();
  await until(() => service()?.sleep === 'awake' && service()?.tunnel.state === 'up', { timeoutMs: 20_000, what: 'qwen awake with its tunnel up' });
  await until(() => app.fleet.snapshot().hosts.some((h) => h.label === HOST && !h.gpuStale && h.updatedAt !== null), { timeoutMs: 15_000, what: 'a GPU reading' });

  // Planted secrets: an upstream API key in the secret store and a client token.
  await call('secrets.set', { name: 'planted-upstream-key', value: PLANTED_SECRET });
  token = (await call<{ token: string }>('proxy.createToken', { name: 'planted-client', maxClass: 'batch' })).token;

  // A baseline far above what the host can do: the benchmark's load raises a throughput alert.
  await call('alerts.setBaseline', { model: service()!.model, tokPerS: 100_000 });
  const scenario = BenchScenarioSchema.parse({
    name: 'night shift sweep',
    target: { kind: 'tunnel', host: HOST, serviceId: 'qwen' },
    prompts: { kind: 'synthetic', inputTokens: 32 },
    maxTokens: 64,
    ignoreEos: true,
    levels: [1, 2],
    perLevel: { kind: 'requests', count: 2 },
    stability: { requests: 4, concurrency: 2 },
  });
  const { runId } = await call<{ runId: string }>('bench.start', { scenario });
  run = await app.bench.service.whenFinished(runId);
  await until(() => app.store.audit.list({ limit: 1000 }).some((e) => e.type === 'alert.raised' && e.target?.startsWith(HOST) && (e.payload as { kind?: unknown }).kind === 'throughput'), { timeoutMs: 20_000, what: 'a throughput alert' });

  slept = await approve('sleep');
  woke = await approve('wake');
  await call('reports.setGate', { id: 'order.matches', status: 'pass', note: 'L20 46 GB, 8 vCPU, 64 GiB as ordered (ticket OPS-4411)' });

  exported = await call<ReportExport>('reports.export', {
    request: { title: 'Night shift evidence', hosts: [HOST], fromMs: startedAt - 60_000, toMs: Date.now() + 1_000 },
    formats: ['md', 'html', 'json', 'pdf'],
    sign: { keyFile, passphrase: PASSPHRASE },
    outDir: join(work, 'out'),
  });
}, 180_000);

afterAll(async () => {
  await c?.dispose();
  if (work) rmSync(work, { recursive: true, force: true });
});

const file = (name: string) => join(exported.dir, name);
const evidence = (): Evidence => EvidenceSchema.parse(JSON.parse(readFileSync(file('evidence.json'), 'utf8')));

describe('an evidence report of a scripted session', () => {
  it('holds exactly the session’s facts', () => {
    expect(run.state).toBe('completed');
    expect(slept.state, slept.error ?? '').toBe('verified');
    expect(woke.state, woke.error ?? '').toBe('verified');
    const e = evidence();
    expect(e.title).toBe('Night shift evidence');
    expect(e.hosts).toEqual([HOST]);
    expect(e.benchmarks!.map((r) => r.id)).toEqual([run.id]);
    expect(e.benchmarks![0]!.levels.map((l) => `${l.phase}:${l.level}`)).toEqual(['level:1', 'level:2', 'stability:2']);
    expect(e.lifecycle!.actions.map((a) => [a.kind, a.state])).toEqual([
      ['sleep', 'verified'],
      ['wake', 'verified'],
    ]);
    expect(e.lifecycle!.actions.every((a) => a.approvedBy?.startsWith('Dana Night-Shift ('))).toBe(true);
    expect(e.alerts!.some((a) => a.event === 'raised' && a.kind === 'throughput' && a.target === UPSTREAM)).toBe(true);
    expect(e.alerts!.every((a) => a.target?.startsWith(`${HOST}`))).toBe(true);
    const gates = Object.fromEntries(e.gates!.map((g) => [g.id, g]));
    expect(gates['order.matches']).toMatchObject({ status: 'pass', note: expect.stringContaining('OPS-4411') });
    expect(gates['auto.lifecycle.verified']?.status).toBe('pass');
    expect(gates['auto.bench.figures']?.status).toBe('pass');
    expect(gates['auto.gpu.visible']?.status).toBe('pass');
    expect(gates['auto.port.loopback']?.status).toBe('pass');
    expect(gates['auto.api.auth']?.status).toBe('unverified'); // the demo services have no API key
    expect(e.inventory![0]!.gpus[0]?.driverVersion).toBeTruthy();
    // The audit head recorded is a real row of this database.
    const row = app.store.audit.list({ limit: 1000 }).find((x) => x.seq === e.audit.headSeq);
    expect(row?.hash).toBe(e.audit.headHash);
    // The export itself is audited with its digests.
    const ev = app.store.audit.list({ limit: 1000, type: 'report.exported' })[0];
    expect(ev?.payload).toMatchObject({ evidenceSha256: exported.evidenceSha256, manifestSha256: exported.manifestSha256, signer: exported.signer });
    expect(readdirSync(exported.dir).sort()).toEqual(['allowed_signers', 'evidence.json', 'manifest.json', 'manifest.json.sig', 'report.html', 'report.md', 'report.pdf']);
    // The inventory says what carried the SSH the evidence was read over.
    expect(readFileSync(join(exported.dir, 'report.md'), 'utf8')).toMatch(/SSH transport\s*\|\s*builtin \(auto: builtin/);
  });

  it('is accepted by ssh-keygen -Y verify, and refused after one byte changes', () => {
    const principal = readFileSync(file('allowed_signers'), 'utf8').split(' ')[0]!;
    const verify = (data: Buffer) =>
      spawnSync('ssh-keygen', ['-Y', 'verify', '-f', file('allowed_signers'), '-I', principal, '-n', 'gpu-console-evidence', '-s', file('manifest.json.sig')], { input: data });
    const manifest = readFileSync(file('manifest.json'));
    const good = verify(manifest);
    expect(good.status, good.stderr.toString()).toBe(0);
    const bad = Buffer.from(manifest);
    const mid = Math.floor(bad.length / 2);
    bad[mid] = bad[mid]! ^ 0x01;
    expect(verify(bad).status).not.toBe(0);
  });

  it('gpu-console report verify passes, then flags a changed report byte and an altered audit row', async () => {
    const db = join(dataDir, 'gpu-console.db');
    const ok = await runCliProcess(['report', 'verify', exported.dir, '--db', db]);
    expect(ok.code, ok.stdout + ok.stderr).toBe(0);
    expect(ok.stdout).toMatch(/^OK/);

    // One byte of the Markdown changed in a copy of the export: the digest check names the file.
    const copy = join(work, 'tampered');
    execFileSync('cp', ['-r', exported.dir, copy]);
    const md = readFileSync(join(copy, 'report.md'));
    md[10] = md[10]! ^ 0x20;
    writeFileSync(join(copy, 'report.md'), md);
    const tampered = await runCliProcess(['report', 'verify', copy]);
    expect(tampered.code).toBe(1);
    expect(tampered.stdout).toMatch(/report\.md/);

    // An audit row inside the covered range altered in a copy of the database.
    const dbCopy = join(work, 'altered.db');
    await app.store.db.backup(dbCopy);
    const seq = evidence().lifecycle!.actions.length ? app.store.audit.list({ limit: 1000, type: 'lifecycle.approved' })[0]!.seq : 2;
    const h = new Database(dbCopy);
    const triggers = h.prepare("SELECT name FROM sqlite_master WHERE type = 'trigger' AND tbl_name = 'audit_events'").all() as { name: string }[];
    for (const t of triggers) h.exec(`DROP TRIGGER ${t.name}`);
    h.prepare('UPDATE audit_events SET actor = ? WHERE seq = ?').run('operator:mallory@web', seq);
    h.close();
    const altered = await runCliProcess(['report', 'verify', exported.dir, '--db', dbCopy]);
    expect(altered.code).toBe(1);
    expect(altered.stdout).toContain(String(seq));
    expect(existsSync(copy)).toBe(true);
  });

  it('holds no planted secret in any file', () => {
    const keyBody = readFileSync(keyFile, 'utf8').split('\n').filter((l) => l && !l.startsWith('-----'));
    const demoKeys = readdirSync(join(dataDir, 'demo'), { recursive: true })
      .map(String)
      .filter((f) => /key/.test(f) && !f.endsWith('.pub'))
      .flatMap((f) => {
        try {
          return readFileSync(join(dataDir, 'demo', f), 'utf8').split('\n').filter((l) => l.length > 20 && !l.startsWith('-----'));
        } catch {
          return [];
        }
      });
    const planted = [PLANTED_SECRET, token, PASSPHRASE, ...keyBody, ...demoKeys];
    expect(planted.length).toBeGreaterThan(4);
    for (const name of readdirSync(exported.dir)) {
      const text = readFileSync(file(name)).toString('latin1');
      for (const secret of planted) expect(text.includes(secret), `${name} contains a planted secret`).toBe(false);
    }
  });

  it('renders in headless Chromium without errors, and the PDF is a real multi-page PDF', async () => {
    const pdf = readFileSync(file('report.pdf'));
    expect(pdf.subarray(0, 5).toString()).toBe('%PDF-');
    expect((pdf.toString('latin1').match(/\/Type\s*\/Page[^s]/g) ?? []).length).toBeGreaterThanOrEqual(2);
    const browser = await openPage(null, { viewport: { width: 1280, height: 900 } });
    try {
      const { page } = browser;
      const problems: string[] = [];
      page.on('console', (m) => {
        if (m.type() === 'error') problems.push(m.text());
      });
      page.on('requestfailed', (r) => problems.push(`failed ${r.url()}`));
      const copy = join(work, 'view.html');
      copyFileSync(file('report.html'), copy);
      await page.goto(`file://${copy}`);
      expect(await page.title()).toContain('Night shift evidence');
      const images = await page.evaluate(() =>
        Array.from((globalThis as unknown as { document: { images: ArrayLike<{ naturalWidth: number }> } }).document.images).map((i) => i.naturalWidth),
      );
      expect(images.length).toBeGreaterThan(0);
      expect(images.every((w) => w > 0)).toBe(true);
      expect(problems).toEqual([]);
    } finally {
      await browser.close();
    }
  });

  it('a host that is down during the live checks is reported unverified, not passed', async () => {
    await call('hosts.disconnect', { label: 'tri-gpu' });
    const { evidence: e } = await call<{ evidence: Evidence; html: string }>('reports.preview', {
      request: { hosts: ['tri-gpu'], fromMs: startedAt - 60_000, toMs: Date.now(), sections: ['inventory', 'security', 'gates'] },
    });
    expect(e.inventory![0]!.liveError).toBeTruthy();
    expect(e.notes.join(' ')).toContain('tri-gpu could not be checked live');
    expect(e.security![0]!.checks.length).toBeGreaterThan(0);
    expect(e.security![0]!.checks.every((c) => c.verdict === 'unverified')).toBe(true);
    const gates = Object.fromEntries(e.gates!.map((g) => [g.id, g.status]));
    for (const id of ['auto.gpu.visible', 'auto.ssh.hardened', 'auto.port.loopback', 'auto.model.serving']) expect(gates[id], id).toBe('unverified');
  });

  // Since #28 item 4 an offline report does not re-scrape and does not leave the figures out either: it takes the
  // version and served model from the fleet's last current reading (the same the host view shows).
  it("without live checks, the inventory comes from the config (redacted) and the fleet's last readings, and the alerts still from the audit log", async () => {
    await until(() => service()?.stale === false && typeof service()?.version === 'string', { timeoutMs: 20_000, what: `${HOST}/qwen read again` });
    const { evidence: e } = await call<{ evidence: Evidence; html: string }>('reports.preview', {
      request: { hosts: [HOST], fromMs: startedAt - 60_000, toMs: Date.now(), sections: ['inventory', 'alerts'], live: false },
    });
    expect(e.inventory![0]!.services.map((s) => s.id)).toEqual(['qwen']);
    expect(e.inventory![0]!.services[0]).toMatchObject({ model: service()!.model, serverVersion: service()!.version });
    expect(e.inventory![0]!.services[0]!.servedModels.map((m) => m.id)).toEqual([service()!.model]);
    expect(e.notes.join(' ')).toContain('Live checks were not run');
    expect(e.alerts!.some((a) => a.event === 'raised' && a.kind === 'throughput')).toBe(true);
    expect(e.alerts!.every((a) => a.target?.startsWith(HOST))).toBe(true);
  });
});

