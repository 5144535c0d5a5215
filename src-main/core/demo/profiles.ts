// The two demo hosts, modelled on real deployments (field notes §1 and §4).
// Every figure here is a simulation input; durations are real-world seconds
// before the fleet's timeScale divides them.

export interface GpuProfile {
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

export interface ServiceProfile {
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
  memory: ServiceMemoryProfile;
  restartCommand: string;
  /** What the restart command prints (stdout, stderr). */
  restartOutput: { stdout: string; stderr: string };
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

export interface HostProfile {
  label: string;
  hostname: string;
  gpu: GpuProfile;
  gpuCount: number;
  pricePerHourUsd: number;
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
    hostname: 'l20-poc',
    gpu: L20,
    gpuCount: 1,
    pricePerHourUsd: 2.641736,
    services: [
      {
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
    hostname: 'tri-gpu',
    gpu: L40S,
    gpuCount: 3,
    pricePerHourUsd: 5.4,
    services: [
      {
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
    ],
  },
];
