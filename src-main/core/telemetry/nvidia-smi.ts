// nvidia-smi `--query-gpu=… --format=csv[,noheader][,nounits]` output, read
// leniently (wire-formats §5.1). Any `[...]` value or bare `N/A` is null; a line
// with the wrong number of columns is skipped and counted.

export type NvidiaSmiValue = string | number | null;
export type NvidiaSmiRow = Record<string, NvidiaSmiValue>;

export interface NvidiaSmiParseResult {
  rows: NvidiaSmiRow[];
  /** Lines that could not be read. */
  errors: number;
}

/** The query the fleet runs; order matters only for headerless output. */
export const GPU_QUERY_FIELDS = [
  'index',
  'uuid',
  'name',
  'memory.used',
  'memory.total',
  'utilization.gpu',
  'power.draw',
  'power.limit',
  'temperature.gpu',
] as const;

export function nvidiaSmiQueryCommand(fields: readonly string[] = GPU_QUERY_FIELDS): string {
  return `nvidia-smi --query-gpu=${fields.join(',')} --format=csv,noheader,nounits`;
}

const UNIT_SUFFIX = / (MiB|GiB|KiB|%|W|MHz|us|ms)$/;
const NUMBER = /^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/;

export function parseNvidiaSmiValue(raw: string): NvidiaSmiValue {
  const text = raw.trim();
  if (text === '' || text === 'N/A' || (text.startsWith('[') && text.endsWith(']'))) return null;
  const bare = text.replace(UNIT_SUFFIX, '');
  if (NUMBER.test(bare)) return Number(bare);
  return text;
}

/** `memory.used [MiB]` → `memory.used`. */
function headerName(column: string): string {
  return column.trim().replace(/\s*\[[^\]]*\]$/, '');
}

function splitLine(line: string): string[] {
  return line.split(',').map((c) => c.trim());
}

/**
 * `fields` names the columns of headerless output. When the first line is a
 * header (it names the first requested field, or `fields` is omitted), columns
 * are taken from it and each row is keyed by canonical field name; requested
 * fields missing from the header read as null.
 */
export function parseNvidiaSmiCsv(text: string, fields?: readonly string[]): NvidiaSmiParseResult {
  const lines = text.split(/\r?\n/).filter((l) => l.trim() !== '');
  if (lines.length === 0) return { rows: [], errors: 0 };
  const firstCols = splitLine(lines[0]!).map(headerName);
  const looksLikeHeader = firstCols.every((c) => /^[A-Za-z_][A-Za-z0-9_.]*$/.test(c));
  const hasHeader = looksLikeHeader && (fields === undefined || fields.some((f) => firstCols.includes(f)));
  const columns = hasHeader ? firstCols : [...(fields ?? [])];
  const body = hasHeader ? lines.slice(1) : lines;
  const wanted = fields ?? columns;
  const rows: NvidiaSmiRow[] = [];
  let errors = 0;
  for (const line of body) {
    const cells = splitLine(line);
    if (cells.length !== columns.length) {
      errors++;
      continue;
    }
    const row: NvidiaSmiRow = {};
    for (const field of wanted) {
      const i = columns.indexOf(field);
      row[field] = i >= 0 ? parseNvidiaSmiValue(cells[i]!) : null;
    }
    rows.push(row);
  }
  return { rows, errors };
}
