// Words of the captured-requests panel: whether capture is on and for what,
// each body's size (and why one is not shown as text). Unknown is never 0.
import { formatStorageBytes, type CaptureBodyMeta, type CaptureStatus } from '../../../../src-preload/contract/index.js';

/** "On: failed requests and 5 % of all · every model · tokens app, ci · bodies up to 64 KiB", or how to turn it on. */
export function captureStatusLine(s: CaptureStatus): string {
  if (!s.enabled) return 'Off: no request bodies are kept. Turn on with proxy.capture.enabled in the config.';
  const what: string[] = [];
  if (s.failures) what.push('failed requests');
  if (s.sampleRate > 0) what.push(`${+(s.sampleRate * 100).toFixed(2)} % of all requests`);
  const scope = what.length > 0 ? what.join(' and ') : 'nothing (failures off, no sample)';
  const models = s.models.length > 0 ? `models ${s.models.join(', ')}` : 'every model';
  const tokens = s.tokens.length > 0 ? `tokens ${s.tokens.join(', ')}` : 'every token';
  return `On: ${scope} · ${models} · ${tokens} · bodies up to ${formatStorageBytes(s.maxBodyBytes)} each`;
}

/** "kept 7 d, 10000 captures, 256 MiB at most · 12 kept (48 KiB)", with what was lost when there was any. */
export function captureKeptLine(s: CaptureStatus): string {
  const r = s.retention;
  const lost = s.dropped > 0 ? ` · ${s.dropped} not written (data folder refused writes)` : '';
  return `Kept ${r.days} d, ${r.rows} captures, ${formatStorageBytes(r.bytes)} at most · ${s.rowsKept} kept (${formatStorageBytes(s.bytesKept)})${lost}`;
}

/** "3.1 KiB", "64 KiB of 50 MiB (truncated)", "1.2 KiB gzip". */
export function bodySizeLabel(m: CaptureBodyMeta): string {
  if (m.encoding === 'empty') return 'empty';
  const size = formatStorageBytes(m.sizeBytes);
  if (m.encoding !== 'utf8') return `${size} ${ENCODING_WORDS[m.encoding]}`;
  return m.truncated ? `${formatStorageBytes(m.storedBytes)} of ${size} (truncated)` : size;
}

const ENCODING_WORDS: Record<Exclude<CaptureBodyMeta['encoding'], 'utf8' | 'empty'>, string> = {
  compressed: 'compressed',
  binary: 'binary',
  not_utf8: 'not UTF-8',
};

/** Why a body has no text, in a sentence; null when it has text. */
export function bodyWithoutText(m: CaptureBodyMeta): string | null {
  if (m.encoding === 'utf8') return null;
  if (m.encoding === 'empty') return 'No body.';
  if (m.encoding === 'compressed') return `${formatStorageBytes(m.sizeBytes)} ${m.contentEncoding ?? 'compressed'}-encoded: kept as its size only, not as text.`;
  if (m.encoding === 'binary') return `${formatStorageBytes(m.sizeBytes)} of binary data${m.contentType ? ` (${m.contentType})` : ''}: kept as its size only.`;
  return `${formatStorageBytes(m.sizeBytes)} that are not UTF-8 text: kept as their size only.`;
}
