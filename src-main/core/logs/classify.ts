// Known failure lines of the servers the console runs, so the UI can mark them
// and an alert can quote them. Patterns come from recorded logs (test/fixtures/logs,
// with their SOURCE); a line matches the first kind that fits. The kinds are the contract's.
import type { LogFailureKind } from '../../../src-preload/contract/index.js';

const RULES: readonly (readonly [LogFailureKind, RegExp])[] = [
  // PyTorch (`torch.OutOfMemoryError: CUDA out of memory.`, older `torch.cuda.OutOfMemoryError`), ggml's cudaMalloc, cuBLAS.
  ['cuda-oom', /CUDA out of memory|OutOfMemoryError|cudaMalloc failed: out of memory|CUBLAS_STATUS_ALLOC_FAILED|cudaErrorMemoryAllocation|hipErrorOutOfMemory|unable to allocate (?:CUDA|ROCm|Vulkan)\d* buffer/],
  // vLLM when the weights fit and the KV cache does not.
  ['kv-cache', /No available memory for the cache blocks|larger than the maximum number of tokens that can be stored in KV cache|Insufficient memory for KV cache/i],
  ['nccl-error', /\bNCCL error\b|ncclSystemError|ncclInternalError|ncclUnhandledCudaError|ncclRemoteError|NCCL WARN/],
  // The kernel's NVRM line (`NVRM: Xid (PCI:0000:3b:00): 79, …`), and as tools quote it.
  ['xid', /\bNVRM: Xid\b|\bXid \(PCI:|\bXid\s+\d+\b/],
  ['engine-dead', /EngineDeadError|EngineCore failed to start|Engine core initialization failed|Engine core proc \S+ died unexpectedly|EngineCore encountered a fatal error|AsyncEngineDeadError/],
  // llama.cpp: `llama_model_load: error loading model: …`, `…: failed to load model`, the server's `exiting due to model loading error`.
  ['model-load-failed', /failed to load model|error loading model|exiting due to model loading error|Failed to load model/],
  // llama.cpp's server around a request that failed (`error while handling …`, `got exception: …`).
  ['request-error', /error while handling|got exception:/i],
  // A ghost process on the service's port (field notes §2).
  ['port-in-use', /Address already in use|couldn't bind HTTP server socket|address already in use/],
  ['download-failed', /GatedRepoError|RepositoryNotFoundError|Repository Not Found|401 Client Error|We couldn't connect to 'https:\/\/huggingface\.co'|LocalEntryNotFoundError/],
  ['disk-full', /No space left on device|ENOSPC/],
  ['context-length', /maximum context length is \d+|exceeds the available context size|is longer than the maximum model length/i],
  ['traceback', /Traceback \(most recent call last\):/],
];

/** The known failure a line shows, or null. */
export function classifyLine(text: string): LogFailureKind | null {
  for (const [kind, re] of RULES) if (re.test(text)) return kind;
  return null;
}
