// Telemetry readers: Prometheus text and vLLM figures, nvidia-smi CSV, counter
// → rate conversion, and HTTP scrapes with deadlines and size caps. Parsers
// never throw on odd input; they return what they could read and count the rest.
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
