// Telemetry: sources behind one interface (vLLM, llama-server, nvidia-smi, AMD),
// lenient parsers that count what they cannot read, derived figures (rates,
// windowed percentiles), and the series store (1 s memory, 10 s / 5 min on disk).
export { TelemetryErrorCode } from './errors.js';
export {
  parsePrometheusText,
  parseSampleValue,
  DEFAULT_MAX_METRICS_BYTES,
  type MetricFamily,
  type MetricSample,
  type MetricType,
  type ParsedMetrics,
} from './prometheus.js';
export { readVllmMetrics, type VllmMetrics, type SleepState, type Histogram, type HistogramBucket } from './vllm-metrics.js';
export {
  parseNvidiaSmiCsv,
  parseNvidiaSmiValue,
  nvidiaSmiQueryCommand,
  GPU_QUERY_FIELDS,
  type NvidiaSmiRow,
  type NvidiaSmiValue,
  type NvidiaSmiParseResult,
} from './nvidia-smi.js';
export { readLlamaServerMetrics, type LlamaServerMetrics } from './llama-server-metrics.js';
export { CounterRate } from './counter-rate.js';
export {
  fetchText,
  scrapeVllmMetrics,
  scrapeLlamaServerMetrics,
  probeHealth,
  type HttpScrapeOptions,
  type HttpText,
  type VllmScrape,
  type LlamaServerScrape,
} from './http-scrape.js';
export { histogramDelta, histogramQuantile, type QuantileResult } from './histogram.js';
export {
  emptyServiceReading,
  type ServiceReading,
  type ServiceHealth,
  type GpuReading,
  type GpuProcess,
  type SourceReading,
  type StaleReason,
} from './readings.js';
export { parseVllmIsSleeping, parseVllmVersion, parseVllmModels, vllmMaxModelLen, vllmModelPath, type VllmModelCard } from './vllm-endpoints.js';
export {
  parseLlamaSlots,
  parseLlamaProps,
  llamaSlotsTokensInUse,
  llamaHealthFromResponse,
  parseLlamaRouterModels,
  MAX_LLAMA_SLOTS,
  type LlamaRouterModel,
  type LlamaSlot,
  type LlamaSlots,
  type LlamaProps,
} from './llama-server-endpoints.js';
export {
  WANTED_GPU_FIELDS,
  COMPUTE_APPS_FIELDS,
  parseHelpQueryGpu,
  selectGpuFields,
  unknownFieldInError,
  parseComputeApps,
  gpuReadingsFromNvidiaSmi,
  nvidiaGpuFigures,
  type ComputeApp,
} from './nvidia-smi-gpus.js';
export { parseAmdSmiMetricJson, parseRocmSmiJson, parseAmdSysfs, AMD_SYSFS_COMMAND, type AmdParseResult } from './amd-gpu.js';
export {
  httpGetFor,
  staleFromError,
  staleReason,
  formatStaleReason,
  type TelemetrySource,
  type SourceKind,
  type HttpGet,
  type ExecRunner,
} from './source.js';
export { VllmHttpSource, type HttpServiceSourceOptions } from './vllm-source.js';
export { LlamaServerHttpSource, type LlamaServerSourceOptions } from './llama-server-source.js';
export { SglangHttpSource, type SglangSourceOptions } from './sglang-source.js';
export { readSglangMetrics, serviceReadingFromSglang, type SglangMetrics } from './sglang-metrics.js';
export { TeiHttpSource, type TeiSourceOptions } from './tei-source.js';
export { readTeiMetrics, serviceReadingFromTei, parseTeiInfo, type TeiMetrics, type TeiInfo } from './tei-metrics.js';
export { OpenAiHealthSource, type OpenAiHealthSourceOptions } from './openai-source.js';
export { LiveTokenCounter, type LiveTotals } from './llama-live-tokens.js';
export { NvidiaSmiSource, AmdGpuSource, type ExecSourceOptions, type AmdTool } from './gpu-sources.js';
export { serviceReadingFromVllm, serviceReadingFromLlama, serviceReadingFromFamilies } from './reading-from-metrics.js';
export { ServiceDeriver, type ServiceFigures, type ServiceDeriverOptions } from './derive.js';
export { gpuValues, serviceValues, staleServiceValues, costValues, hostValuesOf, causeOf, type HostValues, type HostReadings, type FleetReadings } from './host-values.js';
export { SeriesStore, type SeriesStoreOptions } from './series-store.js';
export { TelemetryService, proxyValues, type TelemetryServiceDeps, type TelemetryFleet, type TelemetryReadings, type LogFailureSource, type ProxyStatsSource } from './service.js';
export { telemetryChannels } from './channels.js';
export { GPU_DETECT_COMMAND, parseGpuDetect, vendorOf, type GpuToolKind, type GpuDetection } from './gpu-detect.js';
export { AMD_SYSFS_DEVICE_FILES, AMD_SYSFS_HWMON_FILES } from './amd-gpu.js';
export { renderFleetExposition, escapeLabelValue, FLEET_GPU_SERIES } from './fleet-exposition.js';
export { PrometheusErrorCode } from './errors.js';
export { PrometheusClient, promqlString, regexLiteral, fillMatchers, type PromResult, type PromSeries, type PromSample, type PromPoint } from './prometheus-api.js';
export { PrometheusApiSource, mergePrometheusConfig, familiesFromSeries, type PrometheusApiSourceOptions } from './prometheus-api-source.js';
export { gpuReadingsFromSeries, DCGM } from './prometheus-gpu-series.js';
