// Test doubles for the fleet: an SshSession whose state the test drives, whose
// exec answers from a script, and whose tunnels reach a loopback HTTP server
// that plays a vLLM /metrics and /health.

import { createServer, type Server } from 'node:http';
import { connect as netConnect, type AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import { AppError, Emitter } from '../../../../src-main/core/base/index.js';
import type { ExecOptions, ExecResult, SshConnectionState, SshSession, SshStateChange } from '../../../../src-main/core/ssh/index.js';

/** The fields of GPU_QUERY_FIELDS, as `--help-query-gpu` lists them. */
const HELP_QUERY_GPU = ['"index"', '"uuid"', '"name"', '"memory.used"', '"memory.total"', '"utilization.gpu"', '"power.draw"', '"power.limit"', '"temperature.gpu"']
  .map((f) => `${f}\nDescription.\n`)
  .join('\n');

export class FakeSession implements SshSession {
  state: SshConnectionState = 'disconnected';
  lastError: AppError | null = null;
  nextRetryAt: number | null = null;
  hostKeyFingerprint: string | null = 'SHA256:' + 'A'.repeat(43);
  disposed = false;
  execCalls = 0;
  forwardCalls: Array<{ dstHost: string; dstPort: number }> = [];
  private readonly emitter = new Emitter<SshStateChange>();
  readonly onDidChangeState = this.emitter.on.bind(this.emitter);
  exec: (command: string, options?: ExecOptions) => Promise<ExecResult>;

  constructor(
    readonly label: string,
    /** remotePort → local port of the fake upstream */
    private readonly upstreams: Map<number, number>,
    nvidiaSmiStdout: string,
  ) {
    // A host with nvidia-smi: detection finds it, --help-query-gpu lists the base fields (no MIG),
    // the query answers the script, compute apps are empty.
    this.exec = async (command) => {
      this.execCalls++;
      const ok = (stdout: string) => ({ exitCode: 0, signal: null, stdout, stderr: '', truncated: false });
      if (command.startsWith('for t in nvidia-smi')) return ok('tool nvidia-smi\n');
      if (command === 'nvidia-smi --help-query-gpu') return ok(HELP_QUERY_GPU);
      if (command.includes('__GPU_CONSOLE_COMPUTE_APPS__')) return ok(`${nvidiaSmiStdout}__GPU_CONSOLE_COMPUTE_APPS__\n`);
      return ok(nvidiaSmiStdout);
    };
  }

  get hasLiveClient(): boolean {
    return this.state === 'connected';
  }

  set(change: SshStateChange): void {
    this.state = change.state;
    this.nextRetryAt = change.nextRetryAt ?? null;
    if (change.error) this.lastError = change.error;
    this.emitter.fire(change);
  }

  async connect(): Promise<void> {
    this.set({ state: 'connecting' });
    this.set({ state: 'connected' });
  }

  async disconnect(): Promise<void> {
    this.set({ state: 'disconnected' });
  }

  async trustFingerprint(): Promise<void> {
    await this.connect();
  }

  async forwardOut(_srcIp: string, _srcPort: number, dstHost: string, dstPort: number): Promise<Duplex> {
    this.forwardCalls.push({ dstHost, dstPort });
    if (this.state !== 'connected') throw new AppError('SSH_NOT_CONNECTED', 'not connected', { retryable: true });
    const port = this.upstreams.get(dstPort);
    if (port === undefined) throw new AppError('SSH_FORWARD_FAILED', 'Connection refused', { retryable: true });
    const sock = netConnect(port, '127.0.0.1');
    await new Promise<void>((resolve, reject) => {
      sock.once('connect', resolve);
      sock.once('error', reject);
    });
    return sock;
  }

  async dispose(): Promise<void> {
    this.disposed = true;
    if (this.state !== 'disconnected') await this.disconnect();
    this.emitter.dispose();
  }
}

export interface FakeVllm {
  port: number;
  generationTokens: number;
  promptTokens: number;
  running: number;
  kvUsage: number;
  metricsStatus: number;
  healthStatus: number;
  /** Status of GET /v1/models: the tunnel probe. */
  modelsStatus: number;
  chatCalls: number;
  close(): Promise<void>;
}

export async function startFakeVllm(): Promise<FakeVllm> {
  const state = {
    generationTokens: 1_000,
    promptTokens: 5_000,
    running: 2,
    kvUsage: 0.4,
    metricsStatus: 200,
    healthStatus: 200,
    modelsStatus: 200,
    chatCalls: 0,
  };
  const server: Server = createServer((req, res) => {
    if (req.url === '/v1/models') {
      res.writeHead(state.modelsStatus, { 'content-type': 'application/json' });
      res.end(state.modelsStatus === 200 ? JSON.stringify({ object: 'list', data: [{ id: 'm', object: 'model' }] }) : JSON.stringify({ error: { message: 'model not loaded' } }));
      return;
    }
    if (req.url === '/v1/chat/completions' && req.method === 'POST') {
      state.chatCalls++;
      req.resume();
      req.on('end', () => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ id: 'c1', object: 'chat.completion', choices: [{ index: 0, message: { role: 'assistant', content: 'OK' }, finish_reason: 'length' }] }));
      });
      return;
    }
    if (req.url === '/health') {
      res.writeHead(state.healthStatus).end();
      return;
    }
    if (req.url === '/metrics') {
      res.writeHead(state.metricsStatus, { 'content-type': 'text/plain; version=0.0.4' });
      res.end(
        [
          '# TYPE vllm:num_requests_running gauge',
          `vllm:num_requests_running{engine="0",model_name="m"} ${state.running}`,
          '# TYPE vllm:num_requests_waiting gauge',
          'vllm:num_requests_waiting{engine="0",model_name="m"} 1',
          '# TYPE vllm:kv_cache_usage_perc gauge',
          `vllm:kv_cache_usage_perc{engine="0",model_name="m"} ${state.kvUsage}`,
          '# TYPE vllm:generation_tokens_total counter',
          `vllm:generation_tokens_total{engine="0",model_name="m"} ${state.generationTokens}`,
          '# TYPE vllm:prompt_tokens_total counter',
          `vllm:prompt_tokens_total{engine="0",model_name="m"} ${state.promptTokens}`,
          '# TYPE vllm:engine_sleep_state gauge',
          'vllm:engine_sleep_state{engine="0",model_name="m",sleep_state="awake"} 1',
          '',
        ].join('\n'),
      );
      return;
    }
    res.writeHead(404).end();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  return Object.assign(state, {
    port,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  });
}
