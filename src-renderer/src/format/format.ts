// Display formatting. Unknown is "—", never a made-up zero; inputs that are not
// finite numbers count as unknown too.

export const DASH = '—';

type Maybe = number | null | undefined;

function known(value: Maybe): value is number {
  return typeof value === 'number' && Number.isFinite(value);
}

/** MiB → GiB with one decimal: 46068 → "45.0". */
export function formatGiB(mib: Maybe): string {
  return known(mib) ? (mib / 1024).toFixed(1) : DASH;
}

/** "12.3 / 45.0 GiB"; either side may be "—". */
export function formatMemory(usedMiB: Maybe, totalMiB: Maybe): string {
  if (!known(usedMiB) && !known(totalMiB)) return DASH;
  return `${formatGiB(usedMiB)} / ${formatGiB(totalMiB)} GiB`;
}

/** A fraction of used over total in 0–100, or null when unknowable. */
export function ratioPct(used: Maybe, total: Maybe): number | null {
  if (!known(used) || !known(total) || total <= 0) return null;
  return Math.min(100, Math.max(0, (used / total) * 100));
}

/** Percent already in 0–100: 87.4 → "87%"; digits for finer figures. */
export function formatPct(pct: Maybe, digits = 0): string {
  return known(pct) ? `${pct.toFixed(digits)}%` : DASH;
}

/** Tokens per second: "4.2", "38.0" below 100, "412" below 1000, then "1.2k". */
export function formatTokPerS(value: Maybe): string {
  if (!known(value)) return DASH;
  const abs = Math.abs(value);
  if (abs >= 1000) return `${(value / 1000).toFixed(1)}k`;
  if (abs >= 100) return value.toFixed(0);
  return value.toFixed(1);
}

/** "215 W" or "215 / 350 W" when the limit is known. */
export function formatPower(watts: Maybe, limitW?: Maybe): string {
  if (!known(watts)) return DASH;
  return known(limitW) ? `${watts.toFixed(0)} / ${limitW.toFixed(0)} W` : `${watts.toFixed(0)} W`;
}

export function formatTemp(celsius: Maybe): string {
  return known(celsius) ? `${celsius.toFixed(0)} °C` : DASH;
}

/** Whole counts (requests running/waiting). */
export function formatCount(value: Maybe): string {
  return known(value) ? Math.round(value).toString() : DASH;
}

export function formatUsdPerHour(usd: Maybe): string {
  return known(usd) ? `$${usd.toFixed(2)}/h` : DASH;
}

/** "in 4 s", "in 2 min", "now" — for a future epoch-ms time relative to `now`. */
export function formatUntil(atMs: Maybe, nowMs: number): string {
  if (!known(atMs)) return DASH;
  const s = Math.round((atMs - nowMs) / 1000);
  if (s <= 0) return 'now';
  if (s < 60) return `in ${s} s`;
  const min = Math.round(s / 60);
  if (min < 60) return `in ${min} min`;
  return `in ${(min / 60).toFixed(1)} h`;
}

/** "12 s ago", "3 min ago" — for a past epoch-ms time relative to `now`. */
export function formatAgo(atMs: Maybe, nowMs: number): string {
  if (!known(atMs)) return DASH;
  const s = Math.max(0, Math.round((nowMs - atMs) / 1000));
  if (s < 60) return `${s} s ago`;
  const min = Math.round(s / 60);
  if (min < 60) return `${min} min ago`;
  return `${(min / 60).toFixed(1)} h ago`;
}

const pad = (n: number): string => n.toString().padStart(2, '0');

/** The local zone at `atMs` as operators read it: "UTC", "UTC+1", "UTC+5:30", "UTC−8" (DST-aware). */
export function zoneLabel(atMs: number): string {
  const off = -new Date(atMs).getTimezoneOffset();
  if (off === 0) return 'UTC';
  const abs = Math.abs(off);
  const h = Math.floor(abs / 60);
  const m = abs % 60;
  return `UTC${off > 0 ? '+' : '−'}${h}${m ? `:${pad(m)}` : ''}`;
}

/**
 * The one time format of the UI: local 24-hour clock with the zone, and the
 * date when it is not today (or always, for logs): "14:03:07 UTC+1",
 * "2026-11-30 14:03:07 UTC+1". Operators compare these with logs, not locales.
 */
export function formatTime(atMs: Maybe, options: { nowMs?: number; date?: 'auto' | 'always' } = {}): string {
  if (!known(atMs)) return DASH;
  const d = new Date(atMs);
  if (Number.isNaN(d.getTime())) return DASH;
  const now = new Date(options.nowMs ?? Date.now());
  const sameDay = d.getFullYear() === now.getFullYear() && d.getMonth() === now.getMonth() && d.getDate() === now.getDate();
  const clock = `${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
  const day = `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}`;
  return `${options.date === 'always' || !sameDay ? `${day} ` : ''}${clock} ${zoneLabel(atMs)}`;
}

/** Local date and time with the zone, always with the date (audit rows, exports listed). */
export function formatTimestamp(atMs: Maybe): string {
  return formatTime(atMs, { date: 'always' });
}

/** ISO 8601 with the local offset, for `<time dateTime>` and copying: "2026-12-02T14:03:07+01:00". */
export function isoLocal(atMs: number): string {
  const d = new Date(atMs);
  const off = -d.getTimezoneOffset();
  const sign = off >= 0 ? '+' : '-';
  const abs = Math.abs(off);
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}${sign}${pad(Math.floor(abs / 60))}:${pad(abs % 60)}`;
}

/** A duration as a person says it: "850 ms", "12 s", "3 min 20 s", "2 h 5 min", "3 d 4 h". */
export function formatDuration(ms: Maybe): string {
  if (!known(ms) || ms < 0) return DASH;
  if (ms < 1000) return `${Math.round(ms)} ms`;
  const s = Math.round(ms / 1000);
  if (s < 60) return `${s} s`;
  const min = Math.floor(s / 60);
  if (min < 60) return s % 60 ? `${min} min ${s % 60} s` : `${min} min`;
  const h = Math.floor(min / 60);
  if (h < 24) return min % 60 ? `${h} h ${min % 60} min` : `${h} h`;
  const days = Math.floor(h / 24);
  return h % 24 ? `${days} d ${h % 24} h` : `${days} d`;
}

/** Short hash for tables: first 12 hex digits. */
export function shortHash(hash: string | null | undefined, length = 12): string {
  return hash ? hash.slice(0, length) : DASH;
}

/** Raw number for `data-value` attributes: '' when unknown. */
export function dataValue(value: Maybe): string {
  return known(value) ? String(value) : '';
}

/** A URL without its scheme for tight cells ("127.0.0.1:18001/v1"); the full one goes in title/copy. */
export function displayUrl(url: string | null | undefined): string {
  if (!url) return DASH;
  return url.replace(/^[a-z][a-z0-9+.-]*:\/\//i, '');
}
