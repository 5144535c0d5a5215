/** Whether `nowMs` falls in [from, to) local time in `tz`; a range may wrap midnight. */
export function inQuietHours(q: { from: string; to: string; tz: string } | undefined, nowMs: number): boolean {
  if (!q) return false;
  const parts = new Intl.DateTimeFormat('en-GB', { timeZone: q.tz, hour: '2-digit', minute: '2-digit', hourCycle: 'h23' }).formatToParts(new Date(nowMs));
  const h = Number(parts.find((p) => p.type === 'hour')?.value ?? 0);
  const m = Number(parts.find((p) => p.type === 'minute')?.value ?? 0);
  const now = h * 60 + m;
  const toMin = (s: string) => Number(s.slice(0, 2)) * 60 + Number(s.slice(3, 5));
  const from = toMin(q.from);
  const to = toMin(q.to);
  if (from === to) return false;
  return from < to ? now >= from && now < to : now >= from || now < to;
}
