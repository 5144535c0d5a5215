import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from './imports.js';

export const CLI = join(ROOT, 'bin', 'gpu-console.js');

/** The e2e tier runs the built console; `npm test` builds first. A missing build is a failure, not a skip. */
export function assertBuilt(): void {
  for (const f of ['out/main/cli.js', 'out/renderer/index.html']) {
    if (!existsSync(join(ROOT, f))) throw new Error(`${f} is missing: run \`npm run build\` before the e2e tests`);
  }
}

export interface RunningConsole {
  child: ChildProcess;
  ui: string;
  output: () => string;
  stop(): Promise<number | null>;
}

/** Starts `gpu-console serve …` and resolves on its ready line (an event, not a sleep). */
export function startConsole(args: string[], timeoutMs = 30_000, env: NodeJS.ProcessEnv = {}): Promise<RunningConsole> {
  const child = spawn(process.execPath, [CLI, 'serve', ...(args.includes('--no-print-url') ? args.filter((a) => a !== '--no-print-url') : ['--print-url', ...args])], { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`console did not print its ready line within ${timeoutMs} ms; output:\n${out}`));
    }, timeoutMs);
    const onData = (chunk: Buffer) => {
      out += chunk.toString('utf8');
      const m = out.match(/^GPU Console ready ui=(\S+)/m);
      if (m) {
        clearTimeout(timer);
        resolve({
          child,
          ui: m[1]!,
          output: () => out,
          stop: () =>
            new Promise((res) => {
              if (child.exitCode !== null) return res(child.exitCode);
              child.once('exit', (code) => res(code));
              child.kill('SIGTERM');
            }),
        });
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', (c: Buffer) => (out += c.toString('utf8')));
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`console exited with ${code} before it was ready; output:\n${out}`));
    });
  });
}

export function runCliProcess(args: string[], input?: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, ...args], { cwd: ROOT, stdio: [input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'] });
    if (input !== undefined) child.stdin!.end(input);
    let stdout = '';
    let stderr = '';
    child.stdout!.on('data', (c: Buffer) => (stdout += c.toString('utf8')));
    child.stderr!.on('data', (c: Buffer) => (stderr += c.toString('utf8')));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** One call to a running console's web bridge, with the token from its ui URL's fragment; the raw answer. */
export async function bridgeCall<T>(ui: string, channel: string, input: unknown): Promise<{ ok: true; data: T } | { ok: false; error: { code: string; message: string } }> {
  const url = new URL(ui);
  const token = new URLSearchParams(url.hash.slice(1)).get('token');
  if (!token) throw new Error(`${ui} carries no token (start the console with --print-url)`);
  const res = await fetch(`${url.origin}/api/${channel}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-gpu-console-token': token },
    body: JSON.stringify(input),
  });
  return (await res.json()) as { ok: true; data: T } | { ok: false; error: { code: string; message: string } };
}
