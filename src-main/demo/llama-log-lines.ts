// What llama.cpp's llama-server (b6xxx, a ROCm build on the Strix Halo) writes
// to stderr, in its own shapes: the backend and model-loading lines, the
// server's `main:` / `srv` lines, per task the slot lines and the timings
// block, idle sleep, and a load that dies of an allocation failure.
// SOURCE: test/fixtures/logs/llama-server-startup.log and
// llama-server-load-oom.log (quoted ggml-org/llama.cpp #20431, #7366).
import type { TimedLine } from './vllm-log-lines.js';
import type { LogLineSpec } from './service-log.js';
import type { LlamaServiceProfile } from './profiles.js';
import { LLAMA_BUILD_INFO } from './llama-shapes.js';

export interface LlamaLogContext {
  profile: LlamaServiceProfile;
  gpuName: string;
  /** Memory the backend reports free at load (an APU: its GTT). */
  freeMiB: number;
}

const line = (text: string, priority: 3 | 6 = 6): LogLineSpec => ({ text, priority });

export function llamaLoadLines(c: LlamaLogContext): TimedLine[] {
  const p = c.profile;
  const at = (f: number, text: string): TimedLine => ({ at: f, line: () => line(text) });
  return [
    at(0, 'ggml_cuda_init: GGML_CUDA_FORCE_MMQ:    no'),
    at(0, 'ggml_cuda_init: GGML_CUDA_FORCE_CUBLAS: no'),
    at(0, 'ggml_cuda_init: found 1 ROCm devices:'),
    at(0, `  Device 0: ${c.gpuName}, gfx1151 (0x1151), VMM: no, Wave Size: 32`),
    at(0, `build: ${LLAMA_BUILD_INFO.replace(/^b(\d+)-(\w+)$/, '$1 ($2)')} with cc (Ubuntu 14.2.0-4ubuntu2) 14.2.0 for x86_64-linux-gnu`),
    at(0, 'system info: n_threads = 16, n_threads_batch = 16, total_threads = 32'),
    at(0.01, 'main: binding port with default address family'),
    at(0.01, `main: HTTP server is listening, hostname: 127.0.0.1, port: ${p.remotePort}, http threads: 31`),
    at(0.01, 'main: loading model'),
    at(0.02, `srv    load_model: loading model '${p.modelPath}'`),
    at(0.03, `llama_model_load_from_file_impl: using device ROCm0 (${c.gpuName}) - ${Math.round(c.freeMiB)} MiB free`),
    at(0.05, `llama_model_loader: loaded meta data with 35 key-value pairs and 579 tensors from ${p.modelPath} (version GGUF V3 (latest))`),
    at(0.1, 'load_tensors: loading model tensors, this can take a while... (mmap = true)'),
  ];
}

export function llamaReadyLines(c: LlamaLogContext): TimedLine[] {
  const p = c.profile;
  const kvMiB = (p.ctxSize * p.memory.kvBytesPerToken) / 1048576;
  const at = (f: number, text: string): TimedLine => ({ at: f, line: () => line(text) });
  return [
    at(0.6, 'load_tensors: offloaded 49/49 layers to GPU'),
    at(0.6, `load_tensors:        ROCm0 model buffer size = ${p.memory.weightsMiB.toFixed(2)} MiB`),
    at(0.8, `llama_context: n_ctx         = ${p.ctxSize}`),
    at(0.8, `llama_context: n_ctx_per_seq = ${p.ctxSize / p.parallel}`),
    at(0.85, `llama_kv_cache:      ROCm0 KV buffer size = ${kvMiB.toFixed(2)} MiB`),
    at(0.85, `llama_context:      ROCm0 compute buffer size = ${(p.memory.overheadMiB / 3).toFixed(2)} MiB`),
    at(0.9, `srv          init: initializing slots, n_slots = ${p.parallel}`),
    at(1, 'main: model loaded'),
    at(1, "main: chat template, chat_template: {%- for message in messages %}, example_format: '<|im_start|>system'"),
    at(1, `main: server is listening on http://127.0.0.1:${p.remotePort} - starting the main loop`),
    at(1, 'srv  update_slots: all slots are idle'),
  ];
}

/** The load dies allocating the weights' buffer; the process exits with status 1. */
export function llamaOomLines(c: LlamaLogContext): LogLineSpec[] {
  const p = c.profile;
  return [
    line(`ggml_backend_cuda_buffer_type_alloc_buffer: allocating ${p.memory.weightsMiB.toFixed(2)} MiB on device 0: cudaMalloc failed: out of memory`, 3),
    line(`alloc_tensor_range: failed to allocate ROCm0 buffer of size ${Math.round(p.memory.weightsMiB * 1048576)}`, 3),
    line('llama_model_load: error loading model: unable to allocate ROCm0 buffer', 3),
    line('llama_model_load_from_file_impl: failed to load model', 3),
    line(`common_init_from_params: failed to load model '${p.modelPath}'`, 3),
    line(`srv    load_model: failed to load model, '${p.modelPath}'`, 3),
    line('main: exiting due to model loading error', 3),
  ];
}

/** A new process that finds the port taken (a ghost holds it) and exits. */
export function llamaBindFailedLines(c: LlamaLogContext): LogLineSpec[] {
  return [
    line(`build: ${LLAMA_BUILD_INFO.replace(/^b(\d+)-(\w+)$/, '$1 ($2)')} with cc (Ubuntu 14.2.0-4ubuntu2) 14.2.0 for x86_64-linux-gnu`),
    line('main: binding port with default address family'),
    line(`main: couldn't bind HTTP server socket, hostname: 127.0.0.1, port: ${c.profile.remotePort}`, 3),
  ];
}

export function llamaShutdownLines(): LogLineSpec[] {
  return [line('srv    operator(): operator(): cleaning up before exit...'), line('main: server is shutting down')];
}

export function llamaSleepLines(idleSec: number): LogLineSpec[] {
  return [line(`srv  update_slots: no activity for ${idleSec} s, entering sleep mode (model unloaded)`)];
}

export function llamaWakeLines(): LogLineSpec[] {
  return [line('srv  update_slots: request while sleeping, loading the model'), line('main: model loaded')];
}

export interface LlamaTaskLog {
  idTask: number;
  slot: number;
  promptTokens: number;
  cachedTokens: number;
  completionTokens: number;
  promptMs: number;
  predictedMs: number;
  path: string;
  status: number;
}

const ms = (v: number) => v.toFixed(2).padStart(10);
const per = (time: number, n: number) => (n > 0 ? (time / n).toFixed(2) : '0.00').padStart(8);
const tps = (time: number, n: number) => (time > 0 ? ((n * 1000) / time).toFixed(2) : '0.00').padStart(8);

/** A finished task as llama-server logs it: slot launch, prompt done, the timings block, release, the request. */
export function llamaTaskLines(c: LlamaLogContext, t: LlamaTaskLog, allIdle: boolean): LogLineSpec[] {
  const nCtx = c.profile.ctxSize / c.profile.parallel;
  const id = `id  ${t.slot} | task ${t.idTask}`;
  const evaluated = t.promptTokens - t.cachedTokens;
  const past = t.promptTokens + t.completionTokens;
  return [
    line(`slot launch_slot_: ${id} | processing task`),
    line(`slot update_slots: ${id} | new prompt, n_ctx_slot = ${nCtx}, n_keep = 0, n_prompt_tokens = ${t.promptTokens}`),
    line(`slot update_slots: ${id} | prompt done, n_past = ${t.promptTokens}, n_tokens = ${evaluated}`),
    line(`slot print_timing: ${id} | `),
    line(`prompt eval time = ${ms(t.promptMs)} ms / ${String(evaluated).padStart(5)} tokens (${per(t.promptMs, evaluated)} ms per token, ${tps(t.promptMs, evaluated)} tokens per second)`),
    line(`       eval time = ${ms(t.predictedMs)} ms / ${String(t.completionTokens).padStart(5)} tokens (${per(t.predictedMs, t.completionTokens)} ms per token, ${tps(t.predictedMs, t.completionTokens)} tokens per second)`),
    line(`      total time = ${ms(t.promptMs + t.predictedMs)} ms / ${String(evaluated + t.completionTokens).padStart(5)} tokens`),
    line(`slot      release: ${id} | stop processing: n_past = ${past}, truncated = 0`),
    ...(allIdle ? [line('srv  update_slots: all slots are idle')] : []),
    line(`srv  log_server_r: request: POST ${t.path} 127.0.0.1 ${t.status}`),
  ];
}
