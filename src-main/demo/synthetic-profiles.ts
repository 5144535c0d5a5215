// Synthetic demo hosts for benchmarks: N identical 8×H100-class hosts, each
// with a few model services (vLLM and llama-server in turn) splitting its
// GPUs. Model names carry the host label, as a console config needs every
// model name to lead to one service.

import type { GpuProfile, HostProfile, LlamaServiceProfile, ServiceProfile, VllmServiceProfile } from './profiles.js';

export interface SyntheticProfileOptions {
  /** Default 8. */
  gpusPerHost?: number;
  /** Default 2. */
  servicesPerHost?: number;
  /** Engines given to a host's services in turn. Default vLLM, then llama-server. */
  engines?: readonly ('vllm' | 'llama-server')[];
  /** Default `synth`: hosts are synth-001, synth-002, … */
  labelPrefix?: string;
}

const H100: GpuProfile = {
  name: 'NVIDIA H100 80GB HBM3',
  memoryTotalMiB: 81559,
  driverVersion: '590.48.01',
  powerLimitW: 700,
  idlePowerW: 72,
  residentPowerW: 48,
  peakPowerW: 640,
  maxSmClockMHz: 1980,
  maxMemClockMHz: 2619,
  computeCap: '9.0',
  busIds: [],
};

function vllmService(label: string, k: number, gpuIndices: number[]): VllmServiceProfile {
  return {
    engine: 'vllm',
    id: `svc${k}`,
    servedModelName: `llama-3.3-70b-${label}-s${k}`,
    root: '/models/meta-llama/Llama-3.3-70B-Instruct',
    aliases: [],
    remotePort: 8000 + k,
    slots: 16,
    maxModelLen: 32768,
    blockSize: 16,
    numGpuBlocks: 20000,
    gpuMemoryUtilization: 0.9,
    gpuIndices,
    decodeTokPerSec: 30,
    prefillTokPerSec: 8000,
    prefillOverheadMs: 60,
    kind: 'generate',
    // Per GPU it runs on (tensor parallel shares).
    memory: { weightsMiB: 34000, kvCacheMiB: 36000, overheadMiB: 1500, activationMiB: 1200, residueLevel1MiB: 1500, residueLevel2MiB: 800 },
    restartCommand: `sudo systemctl restart vllm-svc${k}`,
    restartOutput: { stdout: '', stderr: '' },
    restartDownSec: 5,
    loadSec: 90,
    sleepLevel1Sec: 1.5,
    sleepLevel2Sec: 0.5,
    wakeLevel1MinSec: 2.5,
    wakeLevel1MaxSec: 4,
    wakeWeightsAllocSec: 1,
    reloadWeightsSec: 20,
    wakeKvCacheSec: 2,
  };
}

function llamaService(label: string, k: number, gpuIndices: number[]): LlamaServiceProfile {
  return {
    engine: 'llama-server',
    id: `svc${k}`,
    alias: `qwen3-32b-${label}-s${k}`,
    modelPath: '/srv/models/Qwen3-32B-Q8_0.gguf',
    aliases: [],
    remotePort: 8000 + k,
    parallel: 4,
    ctxSize: 131072,
    nPredict: 8192,
    gpuIndices,
    decodeTokPerSec: 40,
    batchSlowdown: 0.15,
    prefillTokPerSec: 2500,
    prefillOverheadMs: 30,
    model: {
      ftype: 'Q8_0',
      vocabType: 2,
      nVocab: 151936,
      nCtxTrain: 40960,
      nEmbd: 5120,
      nParams: 32762123264,
      sizeBytes: 34820000000,
      chatTemplate: "{%- for message in messages %}{{- '<|im_start|>' + message.role + '\n' + message.content + '<|im_end|>' + '\n' }}{%- endfor %}",
      bosToken: '<|endoftext|>',
      eosToken: '<|im_end|>',
    },
    memory: { weightsMiB: 33207, overheadMiB: 1500, kvBytesPerToken: 262144, asleepMiB: 300 },
    restartCommand: `sudo systemctl restart llama-server@svc${k}.service`,
    restartOutput: { stdout: '', stderr: '' },
    restartDownSec: 1.5,
    loadSec: 20,
    wakeSec: 8,
  };
}

/** `count` hosts of `gpusPerHost` GPUs, each GPU given to one service (services share GPUs only when there are more services than GPUs). */
/** Where the Nth synthetic host stands: three regions, racks of eight hosts (something to group the overview by). */
function syntheticTags(h: number): Record<string, string> {
  const regions = ['kl', 'sg', 'fra'] as const;
  const rack = Math.floor(h / 8);
  return { region: regions[rack % regions.length]!, rack: `r${rack + 1}` };
}

export function syntheticProfiles(count: number, options: SyntheticProfileOptions = {}): HostProfile[] {
  const gpus = Math.max(1, Math.floor(options.gpusPerHost ?? 8));
  const services = Math.max(1, Math.floor(options.servicesPerHost ?? 2));
  const engines = options.engines && options.engines.length > 0 ? options.engines : (['vllm', 'llama-server'] as const);
  const prefix = options.labelPrefix ?? 'synth';
  const width = Math.max(3, String(count).length);
  const per = Math.floor(gpus / services);
  return Array.from({ length: Math.max(0, Math.floor(count)) }, (_, h) => {
    const label = `${prefix}-${String(h + 1).padStart(width, '0')}`;
    const list: ServiceProfile[] = Array.from({ length: services }, (_, k) => {
      const gpuIndices = per > 0 ? Array.from({ length: per }, (_, i) => k * per + i) : [k % gpus];
      return engines[k % engines.length] === 'vllm' ? vllmService(label, k, gpuIndices) : llamaService(label, k, gpuIndices);
    });
    return { label, hostname: label, gpu: H100, gpuCount: gpus, pricePerHourUsd: 8 * 2.99 * (gpus / 8), tags: syntheticTags(h), services: list };
  });
}
