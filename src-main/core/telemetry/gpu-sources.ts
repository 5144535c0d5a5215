import type { Clock } from '../base/index.js';
import { AMD_SYSFS_COMMAND, parseAmdSmiMetricJson, parseAmdSysfs, parseRocmSmiJson, type AmdParseResult } from './amd-gpu.js';
import { TelemetryErrorCode } from './errors.js';
import {
  COMPUTE_APPS_FIELDS,
  WANTED_GPU_FIELDS,
  gpuReadingsFromNvidiaSmi,
  parseComputeApps,
  parseHelpQueryGpu,
  selectGpuFields,
  unknownFieldInError,
} from './nvidia-smi-gpus.js';
import type { SourceReading } from './readings.js';
import { staleFromError, staleReason, type ExecRunner, type TelemetrySource } from './source.js';

export interface ExecSourceOptions {
  id: string;
  exec: ExecRunner;
  clock: Clock;
  /** Deadline per command. Default 5 s. */
  timeoutMs?: number;
  /** Output cap per command. Default 256 KiB. */
  maxOutputBytes?: number;
}

const APPS_MARKER = '__GPU_CONSOLE_COMPUTE_APPS__';

function firstLine(text: string): string {
  return text.trim().split('\n')[0]?.trim() ?? '';
}

/**
 * nvidia-smi over SSH exec. The first scrape probes `--help-query-gpu` and
 * queries only the fields this driver knows; an "is not a valid field" error
 * probes again. Every `appsEvery`-th scrape also reads `--query-compute-apps`
 * in the same exec (one SSH channel per scrape).
 */
export class NvidiaSmiSource implements TelemetrySource {
  readonly kind = 'nvidia-smi' as const;
  readonly id: string;
  private fields: string[] | null = null;
  private scrapes = 0;

  constructor(private readonly options: ExecSourceOptions & { appsEvery?: number; wantedFields?: readonly string[] }) {
    this.id = options.id;
  }

  /** The fields the next query asks for (null before the probe). */
  get queryFields(): readonly string[] | null {
    return this.fields;
  }

  private async probe(): Promise<string[]> {
    const wanted = this.options.wantedFields ?? WANTED_GPU_FIELDS;
    try {
      const res = await this.options.exec('nvidia-smi --help-query-gpu', { timeoutMs: this.options.timeoutMs ?? 5_000, maxOutputBytes: 512 * 1024 });
      const supported = res.exitCode === 0 ? parseHelpQueryGpu(res.stdout) : null;
      return selectGpuFields(supported, wanted);
    } catch {
      // The query itself will tell what is wrong with the host.
      return [...wanted];
    }
  }

  async scrape(): Promise<SourceReading> {
    const { exec, clock } = this.options;
    this.fields ??= await this.probe();
    const fields = this.fields;
    const withApps = this.scrapes++ % Math.max(1, this.options.appsEvery ?? 5) === 0;
    const gpuCmd = `nvidia-smi --query-gpu=${fields.join(',')} --format=csv,noheader,nounits`;
    const command = withApps
      ? `${gpuCmd} && echo ${APPS_MARKER} && nvidia-smi --query-compute-apps=${COMPUTE_APPS_FIELDS.join(',')} --format=csv,noheader,nounits`
      : gpuCmd;
    let res: Awaited<ReturnType<ExecRunner>>;
    try {
      res = await exec(command, { timeoutMs: this.options.timeoutMs ?? 5_000, maxOutputBytes: this.options.maxOutputBytes ?? 256 * 1024 });
    } catch (err) {
      const at = clock.now();
      return { ok: false, atMs: at, stale: staleFromError(err, at) };
    }
    const at = clock.now();
    const [gpuText, appsText] = res.stdout.split(APPS_MARKER);
    if (res.exitCode !== 0 && !(withApps && appsText !== undefined)) {
      const text = `${res.stderr}\n${res.stdout}`;
      const unknown = unknownFieldInError(text);
      if (unknown !== null) {
        this.fields = null;
        return { ok: false, atMs: at, stale: staleReason(TelemetryErrorCode.UNKNOWN_FIELD, `nvidia-smi does not know field "${unknown}"; probing again`, at) };
      }
      const line = firstLine(res.stderr) || firstLine(res.stdout);
      return {
        ok: false,
        atMs: at,
        stale: staleReason(TelemetryErrorCode.EXEC_FAILED, `nvidia-smi exited ${res.exitCode ?? res.signal ?? '?'}${line ? `: ${line}` : ''}`, at),
      };
    }
    let unreadable = 0;
    let apps = null;
    if (withApps && appsText !== undefined && res.exitCode === 0) {
      const parsed = parseComputeApps(appsText);
      apps = parsed.apps;
      unreadable += parsed.errors;
    }
    const { gpus, errors } = gpuReadingsFromNvidiaSmi(gpuText ?? '', fields, apps);
    unreadable += errors;
    if (gpus.length === 0 && errors > 0) {
      return { ok: false, atMs: at, stale: staleReason(TelemetryErrorCode.UNPARSEABLE, `nvidia-smi output could not be read (${errors} lines): ${firstLine(gpuText ?? '').slice(0, 120)}`, at) };
    }
    return { ok: true, atMs: at, gpus, unreadable };
  }
}

export type AmdTool = 'amd-smi' | 'rocm-smi' | 'amd-sysfs';

const AMD_COMMANDS: Record<AmdTool, { command: string; parse: (text: string) => AmdParseResult | null }> = {
  'amd-smi': { command: 'amd-smi metric --usage --mem-usage --power --temperature --json', parse: parseAmdSmiMetricJson },
  'rocm-smi': { command: 'rocm-smi --showuse --showmeminfo vram --showpower --showtemp --json', parse: parseRocmSmiJson },
  'amd-sysfs': { command: AMD_SYSFS_COMMAND, parse: parseAmdSysfs },
};

/** AMD GPUs over SSH exec with one of amd-smi, rocm-smi (deprecated) or the amdgpu sysfs files. */
export class AmdGpuSource implements TelemetrySource {
  readonly id: string;
  readonly kind: AmdTool;

  constructor(private readonly options: ExecSourceOptions & { tool: AmdTool }) {
    this.id = options.id;
    this.kind = options.tool;
  }

  async scrape(): Promise<SourceReading> {
    const { exec, clock, tool } = this.options;
    const { command, parse } = AMD_COMMANDS[tool];
    let res: Awaited<ReturnType<ExecRunner>>;
    try {
      res = await exec(command, { timeoutMs: this.options.timeoutMs ?? 5_000, maxOutputBytes: this.options.maxOutputBytes ?? 512 * 1024 });
    } catch (err) {
      const at = clock.now();
      return { ok: false, atMs: at, stale: staleFromError(err, at) };
    }
    const at = clock.now();
    if (res.exitCode !== 0) {
      const line = firstLine(res.stderr) || firstLine(res.stdout);
      return { ok: false, atMs: at, stale: staleReason(TelemetryErrorCode.EXEC_FAILED, `${tool} exited ${res.exitCode ?? res.signal ?? '?'}${line ? `: ${line}` : ''}`, at) };
    }
    const parsed = parse(res.stdout);
    if (parsed === null || (parsed.gpus.length === 0 && parsed.errors > 0)) {
      return { ok: false, atMs: at, stale: staleReason(TelemetryErrorCode.UNPARSEABLE, `${tool} output could not be read: ${firstLine(res.stdout).slice(0, 120)}`, at) };
    }
    return { ok: true, atMs: at, gpus: parsed.gpus, unreadable: parsed.errors, ...(parsed.issues?.length ? { issues: parsed.issues } : {}) };
  }
}
