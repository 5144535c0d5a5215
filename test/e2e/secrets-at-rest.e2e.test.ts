import { execFileSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync, type Dirent } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt, runCliProcess, startConsole, type RunningConsole } from '../helpers/console-process.js';

// Secrets at rest: one console session on the demo fleet is handed every kind
// of secret it deals with — its own bridge token, proxy client tokens (CLI and
// UI channel), a stored secret, SSH key passphrases (report signing, a host
// key), wrong tokens at the proxy and the bridge — and uses them. After a
// clean stop, no file under the data dir or the export folder, and nothing the
// console printed unasked, may hold any of them in any common encoding. The
// stored secret is expected in secrets.json (the headless secret store) and
// nowhere else; a proxy token's SHA-256 is expected in the database, the token
// never. Findings name the needle's kind, a short prefix, the file and the
// byte offset — never the whole secret.

const DEMO_MODEL = 'qwen';

interface Needle {
  kind: string;
  value: string;
  /** Files (relative to their root, '/' separators) where this value is expected, e.g. the secret store. */
  allowedIn?: readonly string[];
}

interface Finding {
  kind: string;
  prefix: string;
  where: string;
  offset: number;
  form: string;
}

const show = (value: string) => `${value.slice(0, 6)}…(${value.length} chars)`;

/** The byte forms a secret could take in a file: as written, JSON- or URL-escaped, UTF-16, other case of a hex string. */
function forms(value: string): { form: string; bytes: Buffer }[] {
  const out = new Map<string, Buffer>();
  const add = (form: string, bytes: Buffer) => {
    if (![...out.values()].some((b) => b.equals(bytes))) out.set(form, bytes);
  };
  add('utf8', Buffer.from(value, 'utf8'));
  add('json-escaped', Buffer.from(JSON.stringify(value).slice(1, -1), 'utf8'));
  add('url-encoded', Buffer.from(encodeURIComponent(value), 'utf8'));
  add('form-encoded', Buffer.from(new URLSearchParams({ v: value }).toString().slice(2), 'utf8'));
  add('utf16le', Buffer.from(value, 'utf16le'));
  if (/^[0-9a-f]+$/i.test(value)) {
    add('hex-upper', Buffer.from(value.toUpperCase(), 'utf8'));
    add('hex-lower', Buffer.from(value.toLowerCase(), 'utf8'));
  }
  return [...out].map(([form, bytes]) => ({ form, bytes }));
}

/** Every occurrence of every needle in one buffer: raw bytes, and the buffer decoded as UTF-8 text. */
function scan(where: string, data: Buffer, needles: readonly Needle[], rel: string | null): Finding[] {
  const found: Finding[] = [];
  const text = data.toString('utf8');
  for (const n of needles) {
    if (rel !== null && n.allowedIn?.includes(rel)) continue;
    for (const { form, bytes } of forms(n.value)) {
      for (let at = data.indexOf(bytes); at >= 0; at = data.indexOf(bytes, at + 1)) {
        found.push({ kind: n.kind, prefix: show(n.value), where, offset: at, form });
      }
    }
    const t = text.indexOf(n.value);
    if (t >= 0 && !found.some((f) => f.kind === n.kind && f.where === where)) {
      found.push({ kind: n.kind, prefix: show(n.value), where, offset: Buffer.byteLength(text.slice(0, t)), form: 'utf8-text' });
    }
  }
  return found;
}

function walk(root: string): string[] {
  return (readdirSync(root, { recursive: true, withFileTypes: true }) as Dirent[])
    .filter((d) => d.isFile())
    .map((d) => join(d.parentPath, d.name))
    .sort();
}

const mode = (path: string) => (statSync(path).mode & 0o777).toString(8);

describe('secrets at rest: nothing the console is given or creates lands in its files or unasked output', () => {
  let work: string;
  let dataDir: string;
  let exportDir: string;
  let keyFile: string;
  let consoleProc: RunningConsole;
  let closed: Promise<void>;
  let origin: string;
  let proxyUrl: string;
  let bridgeToken: string;
  const needles: Needle[] = [];
  /** Output of CLI commands that must not print secrets (everything but `tokens create` and `url`). */
  const cliOutputs: { command: string; text: string }[] = [];
  let cliProxyToken: string;
  let uiProxyToken: string;
  let storedSecret: string;

  const needle = (kind: string, value: string, allowedIn?: readonly string[]) => {
    needles.push({ kind, value, ...(allowedIn ? { allowedIn } : {}) });
    return value;
  };

  async function bridge<T>(channel: string, input: unknown, token = bridgeToken): Promise<{ status: number; body: { ok: boolean; data?: T; error?: { code: string; message: string } } }> {
    const res = await fetch(`${origin}/api/${channel}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-gpu-console-token': token },
      body: JSON.stringify(input),
    });
    return { status: res.status, body: (await res.json()) as { ok: boolean; data?: T; error?: { code: string; message: string } } };
  }

  async function call<T>(channel: string, input: unknown): Promise<T> {
    const r = await bridge<T>(channel, input);
    if (!r.body.ok) throw new Error(`${channel}: ${r.body.error?.code} ${r.body.error?.message}`);
    return r.body.data as T;
  }

  const cli = (args: string[], input?: string) => runCliProcess([...args, '--data-dir', dataDir], input);

  /** A quiet CLI command: its whole output is scanned later. */
  async function quietCli(args: string[], input?: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
    const r = await cli(args, input);
    cliOutputs.push({ command: args.slice(0, 2).join(' '), text: r.stdout + r.stderr });
    return r;
  }

  /** A chat completion through the proxy; retries while the tunnel comes up (503 with Retry-After). */
  async function chat(token: string, stream = false, deadlineMs = 20_000): Promise<{ status: number; text: string }> {
    const end = Date.now() + deadlineMs;
    for (;;) {
      const res = await fetch(`${proxyUrl}/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
        body: JSON.stringify({ model: DEMO_MODEL, messages: [{ role: 'user', content: 'Say hello.' }], max_tokens: 8, stream }),
      });
      const text = await res.text();
      if (res.status !== 503 || Date.now() > end) return { status: res.status, text };
      await new Promise((r) => setTimeout(r, Math.min(1_000, Number(res.headers.get('retry-after') ?? '0.2') * 1_000)));
    }
  }

  beforeAll(async () => {
    assertBuilt();
    work = mkdtempSync(join(tmpdir(), 'gc-secrets-'));
    dataDir = join(work, 'data');
    exportDir = join(work, 'exports');
    mkdirSync(exportDir);
    consoleProc = await startConsole(
      ['--demo', '--demo-traffic', 'off', '--data-dir', dataDir, '--ui-port', '0', '--log-level', 'debug', '--no-print-url'],
      30_000,
    );
    const child = consoleProc.child;
    closed = new Promise((r) => child.once('close', () => r()));
    origin = new URL(consoleProc.ui).origin;
    const m = consoleProc.output().match(/^GPU Console ready ui=\S+ proxy=(\S+)/m);
    if (!m) throw new Error(`no proxy= in the ready line:\n${consoleProc.output().slice(0, 2_000)}`);
    proxyUrl = m[1]!;
    const ready = JSON.parse(readFileSync(join(dataDir, 'ready.json'), 'utf8')) as { ui: string };
    bridgeToken = needle('bridge token', new URLSearchParams(new URL(ready.ui).hash.slice(1)).get('token') ?? '');
  }, 60_000);

  afterAll(async () => {
    if (consoleProc && consoleProc.child.exitCode === null && consoleProc.child.signalCode === null) await consoleProc.stop();
    if (work) rmSync(work, { recursive: true, force: true });
  });

  it('prints no token in the ready line; ready.json (0600) holds it and `gpu-console url` prints it', async () => {
    expect(bridgeToken).toMatch(/^[0-9a-f]{32,}$/);
    const readyLine = consoleProc.output().split('\n').find((l) => l.startsWith('GPU Console ready'))!;
    expect(readyLine).toBeTruthy();
    expect(readyLine.includes(bridgeToken), 'the ready line holds the bridge token').toBe(false);
    expect(consoleProc.ui).not.toContain('#');
    expect(mode(join(dataDir, 'ready.json'))).toBe('600');

    const url = await cli(['url']);
    expect(url.code, url.stderr).toBe(0);
    const printed = new URL(url.stdout.trim());
    expect(printed.origin).toBe(origin);
    expect(new URLSearchParams(printed.hash.slice(1)).get('token')).toBe(bridgeToken);
  });

  it('is handed secrets of every kind, and uses them', async () => {
    // Proxy client tokens: the CLI prints its token alone; the UI's channel answers it once.
    const created = await cli(['tokens', 'create', 'fuzzclient', '--max-class', 'batch']);
    expect(created.code, created.stderr).toBe(0);
    cliProxyToken = needle('proxy token (CLI)', created.stdout.trim());
    expect(created.stdout).toBe(`${cliProxyToken}\n`);
    uiProxyToken = needle('proxy token (UI channel)', (await call<{ token: string }>('proxy.createToken', { name: 'ui-client', maxClass: 'interactive' })).token);
    for (const t of [cliProxyToken, uiProxyToken]) expect(t).toMatch(/^gcp_[A-Za-z0-9_-]{43}$/);

    // A stored secret through the bridge, and one through the CLI's stdin; both live in the secret store only.
    storedSecret = needle('stored secret (bridge)', `sk-at-rest-${randomBytes(18).toString('base64url')}`, ['secrets.json']);
    const set = await call<{ name: string; persisted: boolean }>('secrets.set', { name: 'upstream.apikey.atrest', value: storedSecret });
    expect(set).toMatchObject({ name: 'upstream.apikey.atrest', persisted: true });
    const cliSecret = needle('stored secret (CLI stdin)', `sk-cli-${randomBytes(18).toString('hex')}`, ['secrets.json']);
    expect((await quietCli(['secrets', 'set', 'upstream.apikey.cli'], `${cliSecret}\n`)).code).toBe(0);

    // Real requests with the tokens; wrong ones are refused.
    const first = await chat(cliProxyToken);
    expect(first.status, first.text.slice(0, 300)).toBe(200);
    expect((await chat(cliProxyToken, true)).status).toBe(200);
    expect((await chat(uiProxyToken)).status).toBe(200);
    const wrongProxy = needle('wrong proxy bearer (well-formed)', `gcp_${randomBytes(32).toString('base64url')}`);
    expect((await chat(wrongProxy)).status).toBe(401);
    const junkProxy = needle('wrong proxy bearer (junk)', `junk-${randomBytes(20).toString('hex')}`);
    expect((await chat(junkProxy)).status).toBe(401);
    const models = await fetch(`${proxyUrl}/models`, { headers: { authorization: `Bearer ${wrongProxy}x` } });
    expect(models.status).toBe(401);
    needle('wrong proxy bearer (models)', `${wrongProxy}x`);
    const wrongBridge = needle('wrong bridge token', randomBytes(32).toString('hex'));
    expect((await bridge('secrets.list', {}, wrongBridge)).status).toBe(401);

    // Report signing with an encrypted key: a wrong passphrase first (error paths leak most), then the right one.
    const passphrase = needle('signing key passphrase', `pass phrase ${randomBytes(9).toString('base64url')} & "q"`);
    keyFile = join(work, 'signing_ed25519');
    execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', passphrase, '-C', 'at-rest', '-f', keyFile]);
    const request = { title: 'Secrets at rest', hosts: ['l20-poc'], fromMs: Date.now() - 10 * 60_000, toMs: Date.now() + 60_000, live: false };
    const wrongPass = needle('wrong signing passphrase', `wrong-${randomBytes(12).toString('hex')}`);
    const refused = await bridge('reports.export', { request, formats: ['md', 'json'], sign: { keyFile, passphrase: wrongPass }, outDir: exportDir });
    expect(refused.body.ok, 'export signed with a wrong passphrase').toBe(false);
    const signed = await call<{ dir: string; signer: string | null }>('reports.export', {
      request,
      formats: ['md', 'html', 'json'],
      sign: { keyFile, passphrase },
      outDir: exportDir,
    });
    expect(signed.signer).toMatch(/^SHA256:/);
    expect(existsSync(join(signed.dir, 'manifest.json.sig'))).toBe(true);
    // The CLI path: passphrase from a file outside the data dir, export into <data dir>/reports.
    const passFile = join(work, 'passphrase.txt');
    writeFileSync(passFile, `${passphrase}\n`, { mode: 0o600 });
    const built = await quietCli(['report', 'build', '--hosts', 'l20-poc', '--since', '1h', '--format', 'md,json', '--sign', keyFile, '--passphrase-file', passFile, '--no-live']);
    expect(built.code, built.stdout + built.stderr).toBe(0);
    expect(existsSync(join(dataDir, 'reports'))).toBe(true);

    // An SSH key passphrase for a host (the demo key is not encrypted: the console keeps it in memory, then reconnects).
    const hostPass = needle('host key passphrase', `host-pass-${randomBytes(12).toString('base64url')}`);
    await call('hosts.passphrase', { label: 'tri-gpu', passphrase: hostPass });
    await call('hosts.reconnect', { label: 'tri-gpu' });
    const end = Date.now() + 15_000;
    for (;;) {
      const snap = await call<{ hosts: { label: string; state: string }[] }>('fleet.snapshot', {});
      if (snap.hosts.find((h) => h.label === 'tri-gpu')?.state === 'connected') break;
      if (Date.now() > end) throw new Error('tri-gpu did not reconnect after its passphrase');
      await new Promise((r) => setTimeout(r, 100));
    }

    // Read commands an operator runs: they must not print any of it.
    const reads = [['tokens', 'list'], ['secrets', 'list', '--json'], ['audit', 'list', '--json', '--limit', '200'], ['status', '--json'], ['report', 'list']];
    const answers = await Promise.all(reads.map((args) => quietCli(args)));
    answers.forEach((r, i) => expect(r.code, `${reads[i]!.join(' ')}: ${r.stderr}`).toBe(0));
    const requests = await call<{ rows: { client: string; status: number }[] }>('proxy.requests', { limit: 50 });
    expect(requests.rows.filter((r) => r.status === 200).map((r) => r.client).sort()).toEqual(['fuzzclient', 'fuzzclient', 'ui-client']);
    // Refused requests (wrong bearer) are counted in /metrics, never stored as rows.
    expect(requests.rows.filter((r) => r.status === 401)).toEqual([]);
    const metrics = await (await fetch(`${proxyUrl.replace(/\/v1$/, '')}/metrics`)).text();
    expect(metrics).toMatch(/gpu_console_proxy_unstored_requests_total\{endpoint="chat",reason="invalid_token"\} [1-9]/);
  }, 90_000);

  it('keeps its database (with -wal and -shm), ready.json, secrets.json and data dir private while running', () => {
    const dbFiles = readdirSync(dataDir).filter((n) => n.startsWith('gpu-console.db'));
    expect(dbFiles).toContain('gpu-console.db');
    // One comparison, so a failure shows every mode at once.
    const modes = { '(data dir)': mode(dataDir), ...Object.fromEntries([...dbFiles, 'ready.json', 'secrets.json'].map((n) => [n, mode(join(dataDir, n))])) };
    const wanted = Object.fromEntries(Object.keys(modes).map((n) => [n, n === '(data dir)' ? '700' : '600']));
    expect(modes).toEqual(wanted);
  });

  it('stops cleanly', async () => {
    const code = await consoleProc.stop();
    await closed; // all of stdout and stderr is in
    expect(code).toBe(0);
  }, 20_000);

  it('holds no secret in any file under the data dir or the export folder, nor in its output', () => {
    expect(needles.length).toBeGreaterThanOrEqual(12);
    expect(needles.every((n) => n.value.length >= 16)).toBe(true);
    const findings: Finding[] = [];
    const files: string[] = [];
    for (const [label, root] of [['data', dataDir], ['exports', exportDir]] as const) {
      for (const path of walk(root)) {
        const rel = relative(root, path).split('\\').join('/');
        files.push(`${label}/${rel}`);
        findings.push(...scan(`${label}/${rel}`, readFileSync(path), needles, label === 'data' ? rel : null));
      }
    }
    // The console's own output (debug logs included), and the quiet CLI commands'.
    findings.push(...scan('console stdout+stderr', Buffer.from(consoleProc.output(), 'utf8'), needles, null));
    for (const o of cliOutputs) findings.push(...scan(`cli ${o.command} output`, Buffer.from(o.text, 'utf8'), needles, null));

    // What was walked: the database, both exports, the demo fleet's keys; the ready file is gone after a clean stop.
    expect(files).toContain('data/gpu-console.db');
    expect(files).toContain('data/secrets.json');
    expect(files.some((f) => /^data\/demo\/.*ed25519$/.test(f))).toBe(true);
    expect(files.some((f) => /^data\/reports\/.+\/manifest\.json\.sig$/.test(f))).toBe(true);
    expect(files.some((f) => /^exports\/.+\/report\.html$/.test(f))).toBe(true);
    expect(files).not.toContain('data/ready.json');

    expect(findings.map((f) => `${f.kind} ${f.prefix} found in ${f.where} at byte ${f.offset} (${f.form})`)).toEqual([]);

    // Positive control: the stored secrets are in the secret store, so the scan sees what is there.
    const store = readFileSync(join(dataDir, 'secrets.json'));
    for (const n of needles.filter((x) => x.allowedIn?.includes('secrets.json'))) {
      expect(store.includes(Buffer.from(n.value)), `${n.kind} is missing from secrets.json`).toBe(true);
    }
    expect(mode(join(dataDir, 'secrets.json'))).toBe('600');
  });

  it("keeps the proxy tokens' SHA-256 in the database, never the tokens (bytes and every SQL value)", () => {
    const dbFiles = readdirSync(dataDir).filter((n) => n.startsWith('gpu-console.db'));
    const bytes = Buffer.concat(dbFiles.map((n) => readFileSync(join(dataDir, n))));
    for (const t of [cliProxyToken, uiProxyToken]) {
      const sha = createHash('sha256').update(t).digest('hex');
      expect(bytes.includes(Buffer.from(sha)), `SHA-256 of ${show(t)} is in the database files`).toBe(true);
      expect(bytes.includes(Buffer.from(t)), `${show(t)} is in the database files`).toBe(false);
    }

    // Values too long for one page are split across overflow pages; read every value back through SQLite.
    const copyDir = join(work, 'db-copy');
    mkdirSync(copyDir);
    for (const n of dbFiles) copyFileSync(join(dataDir, n), join(copyDir, n));
    const db = new Database(join(copyDir, 'gpu-console.db'), { readonly: true });
    const findings: string[] = [];
    let values = 0;
    try {
      const tables = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all() as { name: string }[];
      expect(tables.map((t) => t.name)).toContain('client_tokens');
      for (const { name } of tables) {
        for (const row of db.prepare(`SELECT * FROM "${name.replace(/"/g, '""')}"`).iterate() as Iterable<Record<string, unknown>>) {
          for (const [column, v] of Object.entries(row)) {
            if (typeof v !== 'string' && !Buffer.isBuffer(v)) continue;
            values++;
            for (const f of scan(`${name}.${column}`, Buffer.isBuffer(v) ? v : Buffer.from(v, 'utf8'), needles, null)) {
              findings.push(`${f.kind} ${f.prefix} found in column ${f.where} at byte ${f.offset} (${f.form})`);
            }
          }
        }
      }
      const hashes = (db.prepare('SELECT token_hash FROM client_tokens').all() as { token_hash: string }[]).map((r) => r.token_hash);
      expect(hashes).toContain(createHash('sha256').update(cliProxyToken).digest('hex'));
    } finally {
      db.close();
    }
    expect(values).toBeGreaterThan(50);
    expect(findings).toEqual([]);
  });
});
