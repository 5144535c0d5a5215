import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ExecResult } from '../../../../src-main/core/ssh/index.js';

// A llama-server stand-in on 127.0.0.1 for lifecycle tests, answering as the
// fixtures in shared/reference/fixtures/llama-server do: /health 503 "Loading
// model" while it loads, /props, a chat completion, and in router mode
// /models, /models/load, /models/unload. Its host side (`exec`) runs the
// restart command (new pid, loading again) and `ss -ltnp` (who holds the
// port); `ghostOnNextRestart` makes the old process keep the port and keep
// answering, as a ghost does.

export interface RouterModel {
  value: 'unloaded' | 'loading' | 'loaded' | 'sleeping';
  failed?: boolean;
  exitCode?: number;
}

export interface FakeLlama {
  url: string;
  port: number;
  /** HTTP calls, `METHOD /path`, and bodies of POSTs. */
  calls: string[];
  bodies: string[];
  /** Commands run on the host. */
  commands: string[];
  pid: number;
  loadMs: number;
  loadingUntil: number;
  sleeping: boolean;
  ghostOnNextRestart: boolean;
  /** ss: 'ok', 'missing' (127), 'no-pid' (not root: no users:(...)). */
  ss: 'ok' | 'missing' | 'no-pid';
  /** The restart command's exit and stderr. */
  restartExit: number;
  restartStderr: string;
  /** Router mode when set. */
  router: Map<string, RouterModel> | null;
  /** Router: models whose load fails (status failed, exit code 1). */
  loadFails: Set<string>;
  restartCommand: string;
  exec(label: string, command: string): Promise<ExecResult>;
  close(): Promise<void>;
}

const LOADING = JSON.stringify({ error: { message: 'Loading model', type: 'unavailable_error', code: 503 } });

export async function startFakeLlama(opts: { restartCommand: string; router?: Record<string, RouterModel['value']>; loadMs?: number }): Promise<FakeLlama> {
  const f: FakeLlama = {
    url: '',
    port: 0,
    calls: [],
    bodies: [],
    commands: [],
    pid: 4242,
    loadMs: opts.loadMs ?? 300,
    loadingUntil: 0,
    sleeping: false,
    ghostOnNextRestart: false,
    ss: 'ok',
    restartExit: 0,
    restartStderr: '',
    router: opts.router ? new Map(Object.entries(opts.router).map(([k, v]) => [k, { value: v }])) : null,
    loadFails: new Set(),
    restartCommand: opts.restartCommand,
    exec(_label, command) {
      f.commands.push(command);
      if (command === f.restartCommand) {
        if (f.restartExit !== 0) return Promise.resolve({ exitCode: f.restartExit, signal: null, stdout: '', stderr: f.restartStderr, truncated: false });
        if (f.ghostOnNextRestart) {
          f.ghostOnNextRestart = false; // the old process ignored the stop and still answers
        } else {
          f.pid += 1000;
          f.loadingUntil = Date.now() + f.loadMs;
          if (f.router) for (const m of f.router.values()) m.value = 'unloaded';
        }
        return Promise.resolve({ exitCode: 0, signal: null, stdout: '', stderr: '', truncated: false });
      }
      if (command === 'ss -ltnp') {
        if (f.ss === 'missing') return Promise.resolve({ exitCode: 127, signal: null, stdout: '', stderr: 'bash: line 1: ss: command not found\n', truncated: false });
        const who = (name: string, pid: number) => (f.ss === 'no-pid' ? '' : ` users:(("${name}",pid=${pid},fd=3))`);
        const stdout = [
          'State  Recv-Q Send-Q Local Address:Port  Peer Address:PortProcess',
          `LISTEN 0      4096   127.0.0.53%lo:53         0.0.0.0:*${who('systemd-resolve', 612)}`,
          `LISTEN 0      512          0.0.0.0:${f.port}       0.0.0.0:*${who('llama-server', f.pid)}`,
          `LISTEN 0      128          0.0.0.0:1${f.port}      0.0.0.0:*${who('other', 77)}`,
          `LISTEN 0      128             [::]:22            [::]:*${who('sshd', 901)}`,
        ].join('\n');
        return Promise.resolve({ exitCode: 0, signal: null, stdout: `${stdout}\n`, stderr: '', truncated: false });
      }
      return Promise.resolve({ exitCode: 127, signal: null, stdout: '', stderr: `bash: ${command.split(' ')[0]}: command not found\n`, truncated: false });
    },
    async close() {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    },
  };
  const send = (res: ServerResponse, status: number, body: unknown) => {
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(typeof body === 'string' ? body : JSON.stringify(body));
  };
  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString('utf8')));
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'http://x');
      f.calls.push(`${req.method} ${url.pathname}${url.search}`);
      if (req.method === 'POST') f.bodies.push(body);
      if (Date.now() < f.loadingUntil) return send(res, 503, LOADING);
      const route = `${req.method} ${url.pathname}`;
      if (route === 'GET /health') return send(res, 200, { status: 'ok' });
      if (route === 'GET /props') {
        return send(res, 200, { default_generation_settings: { n_ctx: 1024 }, total_slots: 4, model_alias: 'tiny-random-llama', build_info: 'b10573-d775b89', is_sleeping: f.sleeping });
      }
      if (route === 'POST /v1/chat/completions') {
        const model = (JSON.parse(body) as { model?: string }).model ?? '';
        if (f.router && f.router.get(model)?.value !== 'loaded') return send(res, 400, { error: { code: 400, message: `model ${model} is not loaded`, type: 'invalid_request_error' } });
        return send(res, 200, { choices: [{ index: 0, finish_reason: 'length', message: { role: 'assistant', content: 'ki' } }], usage: { completion_tokens: 1, prompt_tokens: 9, total_tokens: 10 } });
      }
      if (f.router) {
        if (route === 'GET /models') {
          return send(res, 200, {
            data: [...f.router].map(([id, m]) => ({ id, path: `/models/${id}.gguf`, status: { value: m.value, ...(m.failed ? { failed: true, exit_code: m.exitCode ?? 1 } : {}) } })),
          });
        }
        if (route === 'POST /models/load' || route === 'POST /models/unload') {
          const model = (JSON.parse(body) as { model?: string }).model ?? '';
          const m = f.router.get(model);
          if (!m) return send(res, 400, { error: { code: 400, message: `model not found: ${model}`, type: 'invalid_request_error' } });
          if (route === 'POST /models/unload') {
            m.value = 'unloaded';
            m.failed = false;
          } else if (f.loadFails.has(model)) {
            m.value = 'loading';
            setTimeout(() => Object.assign(m, { value: 'unloaded', failed: true, exitCode: 1 }), 100);
          } else {
            m.value = 'loading';
            setTimeout(() => (m.value = 'loaded'), 150);
          }
          return send(res, 200, { success: true });
        }
      }
      return send(res, 404, { error: { code: 404, message: 'File Not Found', type: 'not_found_error' } });
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  f.port = (server.address() as AddressInfo).port;
  f.url = `http://127.0.0.1:${f.port}`;
  return f;
}
