// Prometheus text exposition format 0.0.4, read leniently: whatever can be read
// is returned, every line that cannot is counted in `errors`. Never throws.

export type MetricType = 'counter' | 'gauge' | 'histogram' | 'summary' | 'untyped';

export interface MetricSample {
  name: string;
  labels: Record<string, string>;
  value: number;
  timestampMs?: number;
}

export interface MetricFamily {
  name: string;
  type: MetricType;
  help: string;
  samples: MetricSample[];
}

export interface ParsedMetrics {
  families: MetricFamily[];
  /** Lines that could not be read, plus one if the input was cut at the size cap. */
  errors: number;
  truncated: boolean;
}

export const DEFAULT_MAX_METRICS_BYTES = 8 * 1024 * 1024;

const TYPES = new Set<MetricType>(['counter', 'gauge', 'histogram', 'summary', 'untyped']);
const NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*/;
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*/;
const SUFFIXES = ['_bucket', '_count', '_sum', '_created', '_total', '_gcount', '_gsum', '_info'];

export function parseSampleValue(text: string): number | null {
  switch (text) {
    case 'NaN':
      return Number.NaN;
    case '+Inf':
    case 'Inf':
      return Number.POSITIVE_INFINITY;
    case '-Inf':
      return Number.NEGATIVE_INFINITY;
  }
  if (!/^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/.test(text)) return null;
  return Number(text);
}

function unescapeHelp(text: string): string {
  return text.replace(/\\(\\|n)/g, (_, c: string) => (c === 'n' ? '\n' : '\\'));
}

/** Reads `{a="x",b="y"}` starting at `pos` (the `{`); returns labels and the index after `}`. */
function readLabels(line: string, pos: number): { labels: Record<string, string>; end: number } | null {
  const labels: Record<string, string> = {};
  let i = pos + 1;
  for (;;) {
    while (line[i] === ' ' || line[i] === '\t') i++;
    if (line[i] === '}') return { labels, end: i + 1 };
    const m = LABEL_NAME.exec(line.slice(i));
    if (!m) return null;
    const name = m[0];
    i += name.length;
    while (line[i] === ' ') i++;
    if (line[i] !== '=') return null;
    i++;
    while (line[i] === ' ') i++;
    if (line[i] !== '"') return null;
    i++;
    let value = '';
    for (;;) {
      const c = line[i];
      if (c === undefined) return null;
      if (c === '\\') {
        const n = line[i + 1];
        if (n === 'n') value += '\n';
        else if (n === '"' || n === '\\') value += n;
        else value += '\\' + (n ?? '');
        i += 2;
        continue;
      }
      if (c === '"') {
        i++;
        break;
      }
      value += c;
      i++;
    }
    labels[name] = value;
    while (line[i] === ' ') i++;
    if (line[i] === ',') {
      i++;
      continue;
    }
    if (line[i] === '}') return { labels, end: i + 1 };
    return null;
  }
}

function parseSampleLine(line: string): MetricSample | null {
  const m = NAME.exec(line);
  if (!m) return null;
  const name = m[0];
  let i = name.length;
  let labels: Record<string, string> = {};
  if (line[i] === '{') {
    const read = readLabels(line, i);
    if (!read) return null;
    labels = read.labels;
    i = read.end;
  }
  const rest = line.slice(i).trim().split(/\s+/);
  if (rest.length < 1 || rest.length > 2 || rest[0] === '') return null;
  const value = parseSampleValue(rest[0]!);
  if (value === null) return null;
  const sample: MetricSample = { name, labels, value };
  if (rest[1] !== undefined) {
    const ts = Number(rest[1]);
    if (!Number.isFinite(ts) || !/^-?\d+$/.test(rest[1])) return null;
    sample.timestampMs = ts;
  }
  return sample;
}

/**
 * A source's sample lines from its previous exposition, parsed. Between two
 * polls most lines of a model server's /metrics are byte for byte the same
 * (every bucket of a histogram that saw nothing new; all of them while idle):
 * those are taken from here instead of being read and allocated again (64
 * hosts read ~25,000 lines a second). It keeps only the lines of the last
 * exposition, so it is bounded by one body. The samples are shared between
 * readings: readers never change a sample or its labels.
 */
export class SampleLineMemo {
  private previous = new Map<string, MetricSample | null>();

  /** The lines of the exposition being read; `commit` makes them the ones the next read looks up. */
  lookup(line: string): MetricSample | null | undefined {
    return this.previous.get(line);
  }

  commit(lines: Map<string, MetricSample | null>): void {
    this.previous = lines;
  }
}

export function parsePrometheusText(input: string, options: { maxBytes?: number; memo?: SampleLineMemo } = {}): ParsedMetrics {
  const maxBytes = options.maxBytes ?? DEFAULT_MAX_METRICS_BYTES;
  let text = input;
  let truncated = false;
  let errors = 0;
  if (Buffer.byteLength(text, 'utf8') > maxBytes) {
    // Cut at the cap and drop the (probably partial) last line.
    text = Buffer.from(text, 'utf8').subarray(0, maxBytes).toString('utf8');
    const lastNewline = text.lastIndexOf('\n');
    text = lastNewline >= 0 ? text.slice(0, lastNewline) : '';
    truncated = true;
    errors++;
  }

  const memo = options.memo;
  const seen = memo ? new Map<string, MetricSample | null>() : null;
  const families: MetricFamily[] = [];
  const byName = new Map<string, MetricFamily>();
  const family = (name: string): MetricFamily => {
    let f = byName.get(name);
    if (!f) {
      f = { name, type: 'untyped', help: '', samples: [] };
      byName.set(name, f);
      families.push(f);
    }
    return f;
  };
  const familyOfSample = (sampleName: string): MetricFamily => {
    const exact = byName.get(sampleName);
    if (exact) return exact;
    for (const suffix of SUFFIXES) {
      if (!sampleName.endsWith(suffix)) continue;
      const base = sampleName.slice(0, -suffix.length);
      // prometheus_client writes `# TYPE x_total counter` with an `x_created` sample under it.
      const f = byName.get(base) ?? byName.get(base + '_total');
      if (f && f.type !== 'untyped') return f;
    }
    return family(sampleName);
  };

  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (line === '') continue;
    if (line.startsWith('#')) {
      const m = /^#\s*(HELP|TYPE)\s+(\S+)(?:\s+(.*))?$/.exec(line);
      if (!m) continue; // a plain comment
      const [, kind, name, rest = ''] = m;
      if (!NAME.test(name!) || NAME.exec(name!)![0] !== name) {
        errors++;
        continue;
      }
      const f = family(name!);
      if (kind === 'HELP') f.help = unescapeHelp(rest);
      else {
        const t = rest.trim() as MetricType;
        if (TYPES.has(t)) f.type = t;
        else errors++;
      }
      continue;
    }
    let sample = memo?.lookup(line);
    if (sample === undefined) sample = parseSampleLine(line);
    seen?.set(line, sample);
    if (!sample) {
      errors++;
      continue;
    }
    familyOfSample(sample.name).samples.push(sample);
  }
  if (memo && seen) memo.commit(seen);
  return { families, errors, truncated };
}
