// What a vLLM 0.11 server (V1 engine) writes, in its own shapes: the API
// server's and the engine core's python logging lines (`(APIServer pid=1) INFO
// MM-DD HH:MM:SS [file.py:line] …`), uvicorn's access lines, the 10 s stats
// line, sleep / wake, shutdown, and a start that dies of CUDA OOM.
// SOURCE: test/fixtures/logs/vllm-startup.log and vllm-cuda-oom.log (quoted
// vLLM issues #23176, #17618, #21882, #19002); figures come from the profile.
import type { LogLineSpec } from './service-log.js';
import type { VllmServiceProfile } from './profiles.js';
import { VLLM_VERSION } from './vllm-simulator.js';

export interface VllmLogContext {
  profile: VllmServiceProfile;
  /** The API server's pid (1 in a container). */
  apiPid: number;
  /** Engine core (or TP worker 0) pid. */
  enginePid: number;
  gpuTotalMiB: number;
}

/** A start-up line due at `at` (a fraction of the load time). */
export interface TimedLine {
  at: number;
  line: (nowMs: number) => LogLineSpec;
}

const pad = (n: number) => String(n).padStart(2, '0');

/** python logging's `%m-%d %H:%M:%S` as vLLM's formatter writes it, in the host's zone (UTC here). */
function vllmTime(ms: number): string {
  const d = new Date(ms);
  return `${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())} ${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())}`;
}

function architectureOf(p: VllmServiceProfile): string {
  if (/qwen3/i.test(p.servedModelName)) return 'Qwen3ForCausalLM';
  if (/gemma/i.test(p.servedModelName)) return 'Gemma3ForConditionalGeneration';
  if (/ocr/i.test(p.servedModelName)) return 'Qwen2_5_VLForConditionalGeneration';
  if (p.kind === 'embed') return 'XLMRobertaModel';
  return 'LlamaForCausalLM';
}

const api = (c: VllmLogContext, level: 'INFO' | 'ERROR' | 'WARNING', where: string, msg: string) => (ms: number): LogLineSpec => ({
  text: `(APIServer pid=${c.apiPid}) ${level} ${vllmTime(ms)} [${where}] ${msg}`,
  pid: c.apiPid,
  priority: level === 'ERROR' ? 3 : level === 'WARNING' ? 4 : 6,
});
const core = (c: VllmLogContext, level: 'INFO' | 'ERROR', where: string, msg: string) => (ms: number): LogLineSpec => ({
  text: `(EngineCore_DP0 pid=${c.enginePid}) ${level} ${vllmTime(ms)} [${where}] ${msg}`,
  pid: c.enginePid,
  priority: level === 'ERROR' ? 3 : 6,
});
const uvicorn = (c: VllmLogContext, msg: string, stream: 'stdout' | 'stderr' = 'stderr') => (): LogLineSpec => ({ text: `(APIServer pid=${c.apiPid}) INFO:     ${msg}`, pid: c.apiPid, stream });

const gib = (mib: number) => (mib / 1024).toFixed(2);

/** The process from its first line until the weights are on the GPU (the OOM run dies after these). */
export function vllmLoadLines(c: VllmLogContext): TimedLine[] {
  const p = c.profile;
  const tp = p.gpuIndices.length;
  const args = `{'model_tag': '${p.root}', 'host': '127.0.0.1', 'port': ${p.remotePort}, 'model': '${p.root}', 'served_model_name': ['${p.servedModelName}'], 'max_model_len': ${p.maxModelLen}, 'gpu_memory_utilization': ${p.gpuMemoryUtilization}, 'max_num_seqs': ${p.slots}${tp > 1 ? `, 'tensor_parallel_size': ${tp}` : ''}, 'enable_sleep_mode': True}`;
  return [
    { at: 0, line: api(c, 'INFO', 'api_server.py:1805', `vLLM API server version ${VLLM_VERSION}`) },
    { at: 0, line: api(c, 'INFO', 'utils.py:326', `non-default args: ${args}`) },
    { at: 0.05, line: api(c, 'INFO', 'model.py:547', `Resolved architecture: ${architectureOf(p)}`) },
    { at: 0.05, line: api(c, 'INFO', 'model.py:1510', `Using max model len ${p.maxModelLen}`) },
    { at: 0.06, line: api(c, 'INFO', 'scheduler.py:205', 'Chunked prefill is enabled with max_num_batched_tokens=8192.') },
    { at: 0.1, line: core(c, 'INFO', 'core.py:644', 'Waiting for init message from front-end.') },
    {
      at: 0.11,
      line: core(c, 'INFO', 'core.py:77', `Initializing a V1 LLM engine (v${VLLM_VERSION}) with config: model='${p.root}', speculative_config=None, tokenizer='${p.root}', dtype=torch.bfloat16, max_seq_len=${p.maxModelLen}, tensor_parallel_size=${tp}, enforce_eager=False, kv_cache_dtype=auto, seed=0, served_model_name=${p.servedModelName}, enable_prefix_caching=True`),
    },
    { at: 0.13, line: core(c, 'INFO', 'parallel_state.py:1208', `rank 0 in world size ${tp} is assigned as DP rank 0, PP rank 0, TP rank 0, EP rank 0`) },
    { at: 0.14, line: core(c, 'INFO', 'gpu_model_runner.py:2602', `Starting to load model ${p.root}...`) },
    { at: 0.15, line: core(c, 'INFO', 'cuda.py:366', 'Using Flash Attention backend on V1 engine.') },
    { at: 0.16, line: core(c, 'INFO', 'weight_utils.py:392', "Using model weights format ['*.safetensors']") },
    { at: 0.4, line: core(c, 'INFO', 'default_loader.py:267', `Loading weights took ${(p.loadSec * 0.24).toFixed(2)} seconds`) },
    { at: 0.41, line: core(c, 'INFO', 'gpu_model_runner.py:2653', `Model loading took ${(p.memory.weightsMiB / 1024 / tp).toFixed(4)} GiB and ${(p.loadSec * 0.26).toFixed(6)} seconds`) },
  ];
}

/** From the loaded weights to serving. */
export function vllmWarmupLines(c: VllmLogContext): TimedLine[] {
  const p = c.profile;
  const tokens = p.numGpuBlocks * p.blockSize;
  return [
    { at: 0.6, line: core(c, 'INFO', 'backends.py:548', `Using cache directory: /root/.cache/vllm/torch_compile_cache/${(p.id + '0000000000').slice(0, 10)}/rank_0_0/backbone for vLLM's torch.compile`) },
    { at: 0.75, line: core(c, 'INFO', 'monitor.py:34', `torch.compile takes ${(p.loadSec * 0.2).toFixed(2)} s in total`) },
    { at: 0.8, line: core(c, 'INFO', 'gpu_worker.py:298', `Available KV cache memory: ${gib(p.memory.kvCacheMiB)} GiB`) },
    { at: 0.8, line: core(c, 'INFO', 'kv_cache_utils.py:1087', `GPU KV cache size: ${tokens.toLocaleString('en-US')} tokens`) },
    { at: 0.8, line: core(c, 'INFO', 'kv_cache_utils.py:1091', `Maximum concurrency for ${p.maxModelLen.toLocaleString('en-US')} tokens per request: ${(tokens / p.maxModelLen).toFixed(2)}x`) },
    { at: 0.95, line: core(c, 'INFO', 'gpu_model_runner.py:3480', `Graph capturing finished in ${Math.round(p.loadSec * 0.12)} secs, took 0.62 GiB`) },
    { at: 0.96, line: core(c, 'INFO', 'core.py:210', `init engine (profile, create kv cache, warmup model) took ${(p.loadSec * 0.5).toFixed(2)} seconds`) },
  ];
}

/** The moment it serves. */
export function vllmReadyLines(c: VllmLogContext, nowMs: number): LogLineSpec[] {
  const p = c.profile;
  const routes = p.kind === 'embed' ? ['/health, Methods: GET', '/v1/models, Methods: GET', '/v1/embeddings, Methods: POST'] : ['/health, Methods: GET', '/v1/models, Methods: GET', '/v1/chat/completions, Methods: POST', '/v1/completions, Methods: POST', '/sleep, Methods: POST', '/wake_up, Methods: POST'];
  return [
    api(c, 'INFO', 'api_server.py:1850', `Starting vLLM API server 0 on http://127.0.0.1:${p.remotePort}`),
    api(c, 'INFO', 'launcher.py:34', 'Available routes are:'),
    ...routes.map((r) => api(c, 'INFO', 'launcher.py:42', `Route: ${r}`)),
    uvicorn(c, `Started server process [${c.apiPid}]`),
    uvicorn(c, 'Waiting for application startup.'),
    uvicorn(c, 'Application startup complete.'),
  ].map((f) => f(nowMs));
}

/** A start that dies while profiling memory: torch's OOM inside the engine core's traceback, then the API server's. */
export function vllmOomLines(c: VllmLogContext, nowMs: number): LogLineSpec[] {
  const total = c.gpuTotalMiB / 1024;
  const inUse = total - 0.39;
  const err = (msg: string) => core(c, 'ERROR', 'core.py:708', msg)(nowMs);
  const plain = (pid: number, text: string): LogLineSpec => ({ text: `(${pid === c.apiPid ? 'APIServer' : 'EngineCore_DP0'} pid=${pid}) ${text}`, pid, priority: 3 });
  const oom = `torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.16 GiB. GPU 0 has a total capacity of ${total.toFixed(2)} GiB of which 402.19 MiB is free. Including non-PyTorch memory, this process has ${inUse.toFixed(2)} GiB memory in use. Of the allocated memory ${(inUse - 0.6).toFixed(2)} GiB is allocated by PyTorch, and 212.41 MiB is reserved by PyTorch but unallocated.`;
  return [
    err('EngineCore failed to start.'),
    err('Traceback (most recent call last):'),
    err('  File "/usr/local/lib/python3.12/dist-packages/vllm/v1/engine/core.py", line 699, in run_engine_core'),
    err('    engine_core = EngineCoreProc(*args, **kwargs)'),
    err('  File "/usr/local/lib/python3.12/dist-packages/vllm/v1/worker/gpu_worker.py", line 263, in determine_available_memory'),
    err('    self.model_runner.profile_run()'),
    err('  File "/usr/local/lib/python3.12/dist-packages/vllm/v1/worker/gpu_model_runner.py", line 3197, in _dummy_sampler_run'),
    err('    raise RuntimeError('),
    err(oom),
    plain(c.enginePid, 'Process EngineCore_DP0:'),
    plain(c.enginePid, 'Traceback (most recent call last):'),
    plain(c.enginePid, oom),
    plain(c.apiPid, 'Traceback (most recent call last):'),
    plain(c.apiPid, '  File "/usr/local/lib/python3.12/dist-packages/vllm/v1/engine/utils.py", line 785, in wait_for_engine_startup'),
    plain(c.apiPid, '    raise RuntimeError("Engine core initialization failed. "'),
    plain(c.apiPid, `RuntimeError: Engine core initialization failed. See root cause above. Failed core proc(s): {}`),
  ];
}

export function vllmShutdownLines(c: VllmLogContext): LogLineSpec[] {
  return ['Shutting down', 'Waiting for application shutdown.', 'Application shutdown complete.', `Finished server process [${c.apiPid}]`].map((m) => uvicorn(c, m)());
}

export function vllmSleepLines(c: VllmLogContext, nowMs: number, level: 1 | 2, freedMiB: number, residueMiB: number): LogLineSpec[] {
  return [
    api(c, 'INFO', 'api_server.py:1012', `sleep the engine with level ${level}`)(nowMs),
    core(c, 'INFO', 'gpu_worker.py:104', `Sleep mode freed ${gib(freedMiB)} GiB memory, ${gib(residueMiB)} GiB memory is still in use.`)(nowMs),
    core(c, 'INFO', 'core.py:367', `It took ${(level === 1 ? c.profile.sleepLevel1Sec : c.profile.sleepLevel2Sec).toFixed(6)} seconds to fall asleep.`)(nowMs),
  ];
}

export function vllmWakeLines(c: VllmLogContext, nowMs: number): LogLineSpec[] {
  return [api(c, 'INFO', 'api_server.py:1020', 'wake up the engine with tags None')(nowMs), core(c, 'INFO', 'core.py:380', 'It took 2.913480 seconds to wake up tags {\'weights\', \'kv_cache\'}.')(nowMs)];
}

/** uvicorn's access line (stdout), as every request to the API server gets one. */
export function vllmAccessLine(c: VllmLogContext, clientPort: number, method: string, path: string, status: number): LogLineSpec {
  const reason = status === 200 ? 'OK' : status === 400 ? 'Bad Request' : status === 404 ? 'Not Found' : status === 503 ? 'Service Unavailable' : status === 500 ? 'Internal Server Error' : '';
  return uvicorn(c, `127.0.0.1:${clientPort} - "${method} ${path} HTTP/1.1" ${status}${reason ? ` ${reason}` : ''}`, 'stdout')();
}

export interface VllmStats {
  promptTps: number;
  genTps: number;
  running: number;
  waiting: number;
  kvUsage: number;
  prefixHitRate: number;
}

/** The stats logger's line (every VLLM_LOG_STATS_INTERVAL, 10 s, while the engine has had work). */
export function vllmStatsLine(c: VllmLogContext, nowMs: number, s: VllmStats): LogLineSpec {
  return api(
    c,
    'INFO',
    'loggers.py:127',
    `Engine 000: Avg prompt throughput: ${s.promptTps.toFixed(1)} tokens/s, Avg generation throughput: ${s.genTps.toFixed(1)} tokens/s, Running: ${s.running} reqs, Waiting: ${s.waiting} reqs, GPU KV cache usage: ${(s.kvUsage * 100).toFixed(1)}%, Prefix cache hit rate: ${(s.prefixHitRate * 100).toFixed(1)}%`,
  )(nowMs);
}
