import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'undici';
import { afterAll, describe, expect, it } from 'vitest';
import { openPage, type BrowserPage } from '../helpers/browser.js';
import { assertBuilt, bridgeCall, runCliProcess, startConsole, type RunningConsole } from '../helpers/console-process.js';
import { ROOT } from '../helpers/imports.js';
import { HAVE_OPENSSH } from '../helpers/ssh-tools.js';

// The whole console on the openssh transport: `serve --demo
// --demo-ssh-transport openssh` reaches the demo hosts through the system
// `ssh` (one ControlMaster each, sockets in <data dir>/ssh), and everything
// above the session works unchanged: GPU figures over exec, tunnels and their
// end-to-end test, a chat through a tunnel, the host view's transport panel;
// a clean stop leaves no ssh process and no socket behind; the tunnels' public
// ports refuse engine admin paths here too.


interface Host { label: string; state: string; transport?: { kind: string; client: string | null; effective: Record<string, string> | null }; gpus: unknown[]; services: { id: string; tunnel: { state: string; localUrl: string | null } }[] }

describe.skipIf(!HAVE_OPENSSH)('the console on the openssh transport', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'gc-e2e-os-'));
  let proc: RunningConsole | null = null;
  let browser: BrowserPage | null = null;

  afterAll(async () => {
    await browser?.close();
    await proc?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  const hosts = async (): Promise<Host[]> => {
    const r = await bridgeCall<{ hosts: Host[] }>(proc!.ui, 'fleet.snapshot', {});
    return r.ok ? r.data.hosts : [];
  };

  it('connects every demo host through ssh, with GPU figures and tunnels up', async () => {
    assertBuilt();
    proc = await startConsole(['--demo', '--demo-traffic', 'off', '--demo-time-scale', '50', '--demo-ssh-transport', 'openssh', '--data-dir', dataDir, '--ui-port', '0', '--proxy-port', '0']);
    const ready = (h: Host) => h.state === 'connected' && h.gpus.length > 0 && h.services.every((s) => s.tunnel.state === 'up');
    await expect.poll(async () => (await hosts()).filter(ready).map((h) => h.label).sort(), { timeout: 30_000, interval: 250 }).toEqual(['l20-poc', 'strix', 'tri-gpu']);
    for (const h of await hosts()) {
      expect(h.transport).toMatchObject({ kind: 'openssh', client: expect.stringMatching(/^OpenSSH_/) });
      expect(h.transport!.effective).toMatchObject({ stricthostkeychecking: 'true', identitiesonly: 'yes' });
      expect(h.transport!.effective!['controlpath']).toContain(join(dataDir, 'ssh'));
    }
    const status = await runCliProcess(['status', '--data-dir', dataDir]);
    expect(status.stdout).toMatch(/^l20-poc {2}connected .* via openssh$/m);
  }, 60_000);

  it('a chat goes through a tunnel that runs on the ControlMaster, and the tunnel test passes', async () => {
    const qwen = (await hosts()).find((h) => h.label === 'l20-poc')!.services.find((s) => s.id === 'qwen')!;
    const res = await request(`${qwen.tunnel.localUrl}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'Qwen3.6-27B-FP8', max_tokens: 8, messages: [{ role: 'user', content: 'hello' }] }),
    });
    expect(res.statusCode).toBe(200);
    expect(((await res.body.json()) as { usage: { completion_tokens: number } }).usage.completion_tokens).toBeGreaterThan(0);
    const test = await bridgeCall<{ ok: boolean }>(proc!.ui, 'tunnels.test', { label: 'l20-poc', serviceId: 'qwen' });
    expect(test).toMatchObject({ ok: true, data: { ok: true } });
    // The same port puts no model to sleep: engine admin paths are the console's actions (#26 finding 7).
    for (const path of ['/sleep?level=1', '/%73leep', '//sleep']) {
      const admin = await request(`${qwen.tunnel.localUrl}${path}`, { method: 'POST' });
      expect(admin.statusCode, path).toBe(403);
      expect(((await admin.body.json()) as { error: { code: string } }).error.code).toBe('TUNNEL_ADMIN_PATH_REFUSED');
    }
  }, 30_000);

  it('a restart runs its SSH command through the ControlMaster and is verified', async () => {
    const proposed = await bridgeCall<{ action: { id: string; nonce: string; steps: { kind: string; text: string }[] } }>(proc!.ui, 'actions.propose', { upstream: 'tri-gpu/embed', kind: 'restart' });
    if (!proposed.ok) throw new Error(proposed.error.message);
    const { action } = proposed.data;
    expect(action.steps.find((s) => s.kind === 'ssh')?.text).toBe('sudo systemctl restart vllm-embed');
    const approved = await bridgeCall(proc!.ui, 'actions.approve', { id: action.id, nonce: action.nonce, typedLabel: 'tri-gpu' });
    expect(approved.ok).toBe(true);
    const state = async () => {
      const r = await bridgeCall<{ actions: { id: string; state: string }[] }>(proc!.ui, 'actions.list', {});
      return r.ok ? r.data.actions.find((a) => a.id === action.id)?.state : undefined;
    };
    await expect.poll(state, { timeout: 30_000, interval: 250 }).toBe('verified');
  }, 40_000);

  it('the host view names the transport and shows what ssh -G reports', async () => {
    browser = await openPage(proc!.ui, { defaultTimeoutMs: 15_000 });
    const page = browser.page;
    // The shortcuts work once the app has rendered: wait for the fleet first (a keypress before is lost).
    await page.getByTestId('host-card-l20-poc').waitFor();
    await page.keyboard.press('Alt+2');
    const panel = page.getByTestId('ssh-transport');
    await panel.waitFor();
    expect(await panel.getAttribute('data-kind')).toBe('openssh');
    expect(await panel.textContent()).toMatch(/OpenSSH client \(ControlMaster\)/);
    await panel.locator('summary').click();
    const table = await page.getByTestId('ssh-effective').textContent();
    expect(table).toMatch(/StrictHostKeyChecking\s*true/);
    expect(table).toMatch(/IdentitiesOnly\s*yes/);
    // A demo host answers commands from the console's own interpreter, with no POSIX shell to keep: its
    // commands take an ssh process each, and the panel says so (a real host's run on one remote shell).
    await expect.poll(() => page.getByTestId('ssh-transport-commands').textContent(), { timeout: 15_000 }).toMatch(/an ssh process each \(a remote shell would not start here/);
    await page.screenshot({ path: join(ROOT, 'test-results', 'e2e-openssh-host-view.png'), fullPage: true });
  }, 30_000);

  it('a clean stop ends every ssh it started and removes its sockets', async () => {
    const code = await proc!.stop();
    proc = null;
    expect(code).toBe(0);
    const left = execFileSync('ps', ['-eo', 'args'], { encoding: 'utf8' }).split('\n').filter((l) => l.includes(join(dataDir, 'ssh')) && /^ssh /.test(l));
    expect(left).toEqual([]);
    const sockets = existsSync(join(dataDir, 'ssh')) ? readdirSync(join(dataDir, 'ssh')).filter((f) => /\.(ctl|fw|sock)$/.test(f)) : [];
    expect(sockets).toEqual([]);
    // The tunnels' private sockets too (the masters held them: the console removes what they leave).
    expect(readdirSync(join(dataDir, 'tunnels'))).toEqual([]);
  }, 20_000);
});
