import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { classifyLine } from '../../../../src-main/core/logs/index.js';

const FIXTURES = join(__dirname, '../../../fixtures/logs');
const linesOf = (f: string) => readFileSync(join(FIXTURES, f), 'utf8').split('\n').filter(Boolean);
const kindsOf = (f: string) => linesOf(f).map((l) => classifyLine(l)).filter((k) => k !== null);

describe('failure classifier on recorded start-up logs', () => {
  it('finds nothing in a healthy vLLM or llama-server start (no false alarm at 3 a.m.)', () => {
    expect(kindsOf('vllm-startup.log')).toEqual([]);
    expect(kindsOf('llama-server-startup.log')).toEqual([]);
  });

  it('names the CUDA OOM, the traceback and the dead engine of a vLLM start that ran out of memory', () => {
    const kinds = kindsOf('vllm-cuda-oom.log');
    expect(kinds).toContain('cuda-oom');
    expect(kinds).toContain('traceback');
    expect(kinds).toContain('engine-dead');
    const oom = linesOf('vllm-cuda-oom.log').filter((l) => classifyLine(l) === 'cuda-oom');
    expect(oom.every((l) => /OutOfMemoryError: CUDA out of memory/.test(l))).toBe(true);
  });

  it("names llama.cpp's cudaMalloc OOM and its failed model load", () => {
    const lines = linesOf('llama-server-load-oom.log');
    expect(classifyLine(lines.find((l) => l.includes('cudaMalloc failed'))!)).toBe('cuda-oom');
    expect(classifyLine(lines.find((l) => l.startsWith('common_init_from_params'))!)).toBe('model-load-failed');
    expect(classifyLine('main: exiting due to model loading error')).toBe('model-load-failed');
  });

  it.each([
    ['NCCL error in: /pytorch/torch/csrc/distributed/c10d/NCCLUtils.hpp:317, unhandled system error, NCCL version 2.21.5', 'nccl-error'],
    ['NVRM: Xid (PCI:0000:3b:00): 79, pid=1234, name=python3, GPU has fallen off the bus.', 'xid'],
    ['srv  operator(): got exception: {"code":500,"message":"error while handling request"}', 'request-error'],
    ["ERROR: [Errno 98] error while attempting to bind on address ('0.0.0.0', 8000): address already in use", 'port-in-use'],
    ["main: couldn't bind HTTP server socket, hostname: 127.0.0.1, port: 8080", 'port-in-use'],
    ['huggingface_hub.errors.GatedRepoError: 401 Client Error.', 'download-failed'],
    ['OSError: [Errno 28] No space left on device', 'disk-full'],
    ["ValueError: This model's maximum context length is 32768 tokens. However, you requested 40000 tokens", 'context-length'],
    ['ValueError: No available memory for the cache blocks. Try increasing `gpu_memory_utilization`', 'kv-cache'],
    ['vllm.v1.engine.exceptions.EngineDeadError: EngineCore encountered an issue.', 'engine-dead'],
    ['INFO:     127.0.0.1:40132 - "GET /health HTTP/1.1" 200 OK', null],
  ])('%s → %s', (line, kind) => {
    expect(classifyLine(line)).toBe(kind);
  });
});
