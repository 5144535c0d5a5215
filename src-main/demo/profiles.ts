// The three demo hosts, modelled on real deployments (field notes §1, §2 and
// §4). Every figure here is a simulation input; durations are real-world
// seconds before the fleet's timeScale divides them.

/** A vLLM-engine service served as another kind of server (engine-dialects.ts). */
export type EngineDialect = 'sglang' | 'tei';

/** An AMD APU's memory as the amdgpu driver reports it: a small VRAM carve-out, the model in GTT (system RAM). */
export interface ApuMemoryProfile {
  /** The DRM card the amdgpu driver registered (`card1` when simpledrm took card0). */
  drmCard: string;
  gttTotalMiB: number;
  /** Carve-out in use with no model (framebuffer, firmware). */
  vramBaselineUsedMiB: number;
  /** GTT in use with no model (desktop, driver). */
  gttBaselineUsedMiB: number;
}

export interface GpuProfile {
  /** Default nvidia (nvidia-smi on the host); amd hosts answer the amdgpu sysfs files instead. */
  vendor?: 'nvidia' | 'amd';
  name: string;
  memoryTotalMiB: number;
  driverVersion: string;
  powerLimitW: number;
  /** Draw with no process on the GPU. */
  idlePowerW: number;
  /** Extra draw when a model is resident but idle (P0 with memory allocated). */
  residentPowerW: number;
  /** Draw when decoding flat out. */
  peakPowerW: number;
  maxSmClockMHz: number;
  maxMemClockMHz: number;
  computeCap: string;
  busIds: string[];
  /** AMD APUs only: memoryTotalMiB is then the VRAM carve-out. */
  apu?: ApuMemoryProfile;
}

/** Memory a service holds on each GPU it runs on. */
export interface ServiceMemoryProfile {
  weightsMiB: number;
  kvCacheMiB: number;
  /** CUDA context, graphs, buffers while awake. */
  overheadMiB: number;
  /** Extra activation memory at full batch. */
  activationMiB: number;
  /** What stays on the GPU while asleep at level 1 / level 2. */
  residueLevel1MiB: number;
  residueLevel2MiB: number;
}

export interface VllmServiceProfile {
  engine: 'vllm';
  id: string;
  servedModelName: string;
  /** What `/v1/models` reports as `root` (the model path vLLM was started with). */
  root: string;
  aliases: string[];
  remotePort: number;
  /** vLLM `--max-num-seqs`. */
  slots: number;
  maxModelLen: number;
  blockSize: number;
  numGpuBlocks: number;
  gpuMemoryUtilization: number;
  /** Indices of the GPUs the service runs on (tensor parallel when more than one). */
  gpuIndices: number[];
  /** Per-sequence decode rate. */
  decodeTokPerSec: number;
  prefillTokPerSec: number;
  prefillOverheadMs: number;
  kind: 'generate' | 'embed';
  embeddingDim?: number;
  /** Serve the engine as an SGLang- or TEI-shaped server (engine-dialects.ts) instead of vLLM. */
  dialect?: EngineDialect;
  memory: ServiceMemoryProfile;
  restartCommand: string;
  /** What the restart command prints (stdout, stderr). */
  restartOutput: { stdout: string; stderr: string };
  /** Fault: every restart ends in CUDA OOM (settable while running: DemoHostHandle.setOomOnRestart). */
  oomOnRestart?: boolean;
  /** Process gone (container stopping/starting) before the new one loads. */
  restartDownSec: number;
  /** New process loading weights and warming up (connection refused meanwhile). */
  loadSec: number;
  sleepLevel1Sec: number;
  sleepLevel2Sec: number;
  /** Level-1 wake: weights back from host RAM; jittered between min and max. */
  wakeLevel1MinSec: number;
  wakeLevel1MaxSec: number;
  /** Level-2: reallocate weights, then reload_weights from disk, then KV cache. */
  wakeWeightsAllocSec: number;
  reloadWeightsSec: number;
  wakeKvCacheSec: number;
}

/** A llama.cpp `llama-server` started with `-m <modelPath> -a <alias> -c <ctxSize> -np <parallel> -n <nPredict> --metrics`. */
export interface LlamaServiceProfile {
  engine: 'llama-server';
  id: string;
  /** `--alias`: the model id the API reports. */
  alias: string;
  /** `-m`: what /props reports as model_path. */
  modelPath: string;
  /** Names the console's config gives the service (the proxy routes them here). */
  aliases: string[];
  remotePort: number;
  /** `--parallel`: number of slots. */
  parallel: number;
  /** `-c`: total context, shared across the slots (per-slot n_ctx = ctxSize / parallel). */
  ctxSize: number;
  /** `-n`: hard cap on generated tokens per request (-1: none). */
  nPredict: number;
  /** `--sleep-idle-seconds`: unload after this long idle (absent or ≤ 0: never). */
  sleepIdleSeconds?: number;
  /** `--api-key`: every route but /health and the model list then needs it. */
  apiKey?: string;
  /** Indices of the GPUs the model is offloaded to (split by layer when more than one). */
  gpuIndices: number[];
  /** Decode rate of one busy slot. */
  decodeTokPerSec: number;
  /** Each further busy slot slows every slot by this fraction (llama.cpp decodes the slots in one batch). */
  batchSlowdown: number;
  prefillTokPerSec: number;
  prefillOverheadMs: number;
  /** What /v1/models reports as meta (GGUF facts). */
  model: {
    ftype: string;
    vocabType: number;
    nVocab: number;
    nCtxTrain: number;
    nEmbd: number;
    nParams: number;
    sizeBytes: number;
    chatTemplate: string;
    bosToken: string;
    eosToken: string;
  };
  /** Totals, split evenly over gpuIndices (llama.cpp splits the layers). */
  memory: {
    weightsMiB: number;
    /** Compute buffers and the backend's context. */
    overheadMiB: number;
    /** KV cache per token in a slot (type-k/type-v quantisation included). */
    kvBytesPerToken: number;
    /** What the process keeps while asleep (model and KV unloaded). */
    asleepMiB: number;
  };
  restartCommand: string;
  restartOutput: { stdout: string; stderr: string };
  /** Fault: every restart's model load fails to allocate (settable while running: DemoHostHandle.setOomOnRestart). */
  oomOnRestart?: boolean;
  /** Old process stopping until the new one binds its port (connection refused meanwhile). */
  restartDownSec: number;
  /** Bound and loading the model (/health answers 503 "Loading model"). */
  loadSec: number;
  /** Loading the model again after an idle sleep (page cache warm). */
  wakeSec: number;
}

export type ServiceProfile = VllmServiceProfile | LlamaServiceProfile;

export interface HostProfile {
  label: string;
  hostname: string;
  gpu: GpuProfile;
  gpuCount: number;
  pricePerHourUsd: number;
  /** The host's monthly budget in the demo config (the proof of concept's USD 500 gate, field notes §1). */
  monthlyBudgetUsd?: number;
  /** Operator tags in the demo config (`hosts[].tags`), for the fleet overview's grouping. */
  tags?: Record<string, string>;
  services: ServiceProfile[];
}

const L20: GpuProfile = {
  name: 'NVIDIA L20',
  memoryTotalMiB: 46068,
  driverVersion: '570.133.20',
  powerLimitW: 275,
  idlePowerW: 34,
  residentPowerW: 30,
  peakPowerW: 258,
  maxSmClockMHz: 2520,
  maxMemClockMHz: 9001,
  computeCap: '8.9',
  busIds: ['00000000:00:07.0'],
};

const L40S: GpuProfile = {
  name: 'NVIDIA L40S',
  memoryTotalMiB: 46068,
  driverVersion: '570.133.20',
  powerLimitW: 350,
  idlePowerW: 36,
  residentPowerW: 44,
  peakPowerW: 300,
  maxSmClockMHz: 2520,
  maxMemClockMHz: 9001,
  computeCap: '8.9',
  busIds: ['00000000:01:00.0', '00000000:41:00.0', '00000000:81:00.0'],
};

/** Strix Halo (Ryzen AI Max+ 395): 64 GiB unified memory, 512 MiB carve-out, GTT raised to 62 GiB (field notes §2). */
const RADEON_8060S: GpuProfile = {
  vendor: 'amd',
  name: 'AMD Radeon 8060S',
  memoryTotalMiB: 512,
  driverVersion: '6.14.0-29-generic',
  powerLimitW: 120,
  idlePowerW: 9,
  residentPowerW: 4,
  peakPowerW: 98,
  maxSmClockMHz: 2900,
  maxMemClockMHz: 8000,
  computeCap: 'gfx1151',
  busIds: ['0000:c5:00.0'],
  apu: { drmCard: 'card1', gttTotalMiB: 62 * 1024, vramBaselineUsedMiB: 96, gttBaselineUsedMiB: 41 },
};

const SLEEP_TIMINGS = {
  sleepLevel1Sec: 1.5,
  sleepLevel2Sec: 0.5,
  wakeLevel1MinSec: 2.5,
  wakeLevel1MaxSec: 4,
  wakeWeightsAllocSec: 1,
  reloadWeightsSec: 20,
  wakeKvCacheSec: 2,
};

function systemdRestart(unit: string, downSec: number, loadSec: number) {
  return {
    restartCommand: `sudo systemctl restart ${unit}`,
    restartOutput: { stdout: '', stderr: '' },
    restartDownSec: downSec,
    loadSec,
  };
}

export const DEMO_HOSTS: readonly HostProfile[] = [
  {
    label: 'l20-poc',
    tags: { site: 'kl', env: 'poc' },
    hostname: 'l20-poc',
    gpu: L20,
    gpuCount: 1,
    pricePerHourUsd: 2.641736,
    monthlyBudgetUsd: 500,
    services: [
      {
        engine: 'vllm',
        id: 'qwen',
        servedModelName: 'Qwen3.6-27B-FP8',
        root: '/models/Qwen3.6-27B-FP8',
        aliases: ['qwen'],
        remotePort: 8000,
        slots: 4,
        maxModelLen: 32768,
        blockSize: 16,
        numGpuBlocks: 9063, // × 16 = 145,008 tokens
        gpuMemoryUtilization: 0.85,
        gpuIndices: [0],
        decodeTokPerSec: 17.5,
        prefillTokPerSec: 3000,
        prefillOverheadMs: 120,
        kind: 'generate',
        memory: {
          weightsMiB: 28303, // 27.64 GiB
          kvCacheMiB: 9200,
          overheadMiB: 500,
          activationMiB: 700,
          residueLevel1MiB: 1300,
          residueLevel2MiB: 700,
        },
        restartCommand: 'docker compose -f /srv/vllm/compose.yaml restart vllm',
        restartOutput: { stdout: '', stderr: ' Container vllm  Restarting\n Container vllm  Started\n' },
        restartDownSec: 10,
        loadSec: 110,
        ...SLEEP_TIMINGS,
      },
    ],
  },
  {
    label: 'tri-gpu',
    tags: { site: 'kl', env: 'prod' },
    hostname: 'tri-gpu',
    gpu: L40S,
    gpuCount: 3,
    pricePerHourUsd: 5.4,
    services: [
      {
        engine: 'vllm',
        id: 'gemma',
        servedModelName: 'Gemma-3-27B-it',
        root: '/models/google/gemma-3-27b-it',
        aliases: ['gemma'],
        remotePort: 8000,
        slots: 8,
        maxModelLen: 32768,
        blockSize: 16,
        numGpuBlocks: 3100,
        gpuMemoryUtilization: 0.85,
        gpuIndices: [0, 1],
        decodeTokPerSec: 21,
        prefillTokPerSec: 4000,
        prefillOverheadMs: 110,
        kind: 'generate',
        memory: {
          weightsMiB: 26370,
          kvCacheMiB: 11500,
          overheadMiB: 900,
          activationMiB: 600,
          residueLevel1MiB: 1500,
          residueLevel2MiB: 800,
        },
        ...systemdRestart('vllm-gemma', 5, 115),
        ...SLEEP_TIMINGS,
      },
      {
        engine: 'vllm',
        id: 'ocr',
        servedModelName: 'olmOCR-2-7B',
        root: '/models/allenai/olmOCR-2-7B-1025-FP8',
        aliases: ['ocr'],
        remotePort: 8001,
        slots: 4,
        maxModelLen: 16384,
        blockSize: 16,
        numGpuBlocks: 16000,
        gpuMemoryUtilization: 0.5,
        gpuIndices: [2],
        decodeTokPerSec: 48,
        prefillTokPerSec: 6000,
        prefillOverheadMs: 90,
        kind: 'generate',
        memory: {
          weightsMiB: 8700,
          kvCacheMiB: 13000,
          overheadMiB: 800,
          activationMiB: 900,
          residueLevel1MiB: 1100,
          residueLevel2MiB: 600,
        },
        ...systemdRestart('vllm-ocr', 5, 60),
        ...SLEEP_TIMINGS,
        reloadWeightsSec: 8,
      },
      {
        engine: 'vllm',
        id: 'embed',
        servedModelName: 'bge-m3',
        root: '/models/BAAI/bge-m3',
        aliases: ['embed'],
        remotePort: 8002,
        slots: 16,
        maxModelLen: 8192,
        blockSize: 16,
        numGpuBlocks: 4000,
        gpuMemoryUtilization: 0.2,
        gpuIndices: [2],
        decodeTokPerSec: 0,
        prefillTokPerSec: 20000,
        prefillOverheadMs: 15,
        kind: 'embed',
        embeddingDim: 1024,
        memory: {
          weightsMiB: 1100,
          kvCacheMiB: 6400,
          overheadMiB: 700,
          activationMiB: 300,
          residueLevel1MiB: 900,
          residueLevel2MiB: 500,
        },
        ...systemdRestart('vllm-embed', 5, 30),
        ...SLEEP_TIMINGS,
        reloadWeightsSec: 2,
      },
      {
        // An SGLang server (python -m sglang.launch_server --enable-metrics): its own /metrics names, no sleep endpoints.
        engine: 'vllm',
        dialect: 'sglang',
        id: 'sgl',
        servedModelName: 'Qwen2.5-3B-Instruct',
        root: '/models/Qwen/Qwen2.5-3B-Instruct',
        aliases: ['qwen-sgl'],
        remotePort: 30000,
        slots: 8,
        maxModelLen: 32768,
        blockSize: 1, // SGLang's KV pool is counted in tokens
        numGpuBlocks: 120000,
        gpuMemoryUtilization: 0.25,
        gpuIndices: [2],
        decodeTokPerSec: 60,
        prefillTokPerSec: 9000,
        prefillOverheadMs: 60,
        kind: 'generate',
        memory: {
          weightsMiB: 6200,
          kvCacheMiB: 4000,
          overheadMiB: 600,
          activationMiB: 400,
          residueLevel1MiB: 0,
          residueLevel2MiB: 0,
        },
        ...systemdRestart('sglang-qwen', 4, 40),
        ...SLEEP_TIMINGS,
      },
      {
        // text-embeddings-inference (ghcr.io/huggingface/text-embeddings-inference): /embed, /v1/embeddings, te_* metrics.
        engine: 'vllm',
        dialect: 'tei',
        id: 'tei',
        servedModelName: 'bge-small-en-v1.5',
        root: '/models/BAAI/bge-small-en-v1.5',
        aliases: ['embed-small'],
        remotePort: 8090,
        slots: 32,
        maxModelLen: 512,
        blockSize: 16,
        numGpuBlocks: 2048,
        gpuMemoryUtilization: 0.05,
        gpuIndices: [2],
        decodeTokPerSec: 0,
        prefillTokPerSec: 40000,
        prefillOverheadMs: 8,
        kind: 'embed',
        embeddingDim: 384,
        memory: {
          weightsMiB: 130,
          kvCacheMiB: 200,
          overheadMiB: 500,
          activationMiB: 300,
          residueLevel1MiB: 0,
          residueLevel2MiB: 0,
        },
        ...systemdRestart('text-embeddings', 3, 10),
        ...SLEEP_TIMINGS,
      },
    ],
  },
  {
    label: 'strix',
    tags: { site: 'desk', env: 'dev' },
    hostname: 'strix',
    gpu: RADEON_8060S,
    gpuCount: 1,
    pricePerHourUsd: 0.32,
    services: [
      {
        engine: 'llama-server',
        id: 'coder',
        alias: 'Qwen3-Coder-30B-A3B',
        modelPath: '/srv/models/Qwen3-Coder-30B-A3B-Instruct-Q4_K_M.gguf',
        aliases: ['coder'],
        remotePort: 8080,
        parallel: 2,
        ctxSize: 262144, // 131,072 per slot
        nPredict: 8192, // the hard cap after a runaway request (field notes §2)
        gpuIndices: [0],
        decodeTokPerSec: 72,
        batchSlowdown: 0.35,
        prefillTokPerSec: 430,
        prefillOverheadMs: 35,
        model: {
          ftype: 'Q4_K - Medium',
          vocabType: 2,
          nVocab: 151936,
          nCtxTrain: 262144,
          nEmbd: 2048,
          nParams: 30532122624,
          sizeBytes: 18556682240,
          chatTemplate:
            "{%- for message in messages %}{{- '<|im_start|>' + message.role + '\n' + message.content + '<|im_end|>' + '\n' }}{%- endfor %}" +
            "{%- if add_generation_prompt %}{{- '<|im_start|>assistant\n' }}{%- endif %}",
          bosToken: '<|endoftext|>',
          eosToken: '<|im_end|>',
        },
        memory: {
          weightsMiB: 17697,
          overheadMiB: 900,
          kvBytesPerToken: 52224, // 48 layers × K+V × 4 heads × 128 × q8_0
          asleepMiB: 150,
        },
        restartCommand: 'sudo systemctl restart llama-server.service',
        restartOutput: { stdout: '', stderr: '' },
        restartDownSec: 1.5,
        loadSec: 14,
        wakeSec: 6,
      },
    ],
  },
];
