// The alerts section's history (evidence/4): each alert of the window with
// how long it was open, who acknowledged it and the silence that covered it,
// then the silences in force at some time in the window, with who set them
// and why. Text from outside (messages, reasons) goes into cells as text.
import type { EvidenceAlertHistory, Silence } from '../../../src-preload/contract/index.js';
import { upstreamKey } from '../upstream/index.js';
import { duration, isoUtc, orDash, type Block } from './report-blocks.js';

function scope(s: Silence): string {
  const where = [s.host && s.serviceId ? upstreamKey(s.host, s.serviceId) : (s.host ?? (s.serviceId ? `service ${s.serviceId}` : null)), s.model ? `model ${s.model}` : null].filter((x) => x !== null);
  return `${s.rule === 'all' ? 'every rule' : s.rule} on ${where.length ? where.join(', ') : 'every host'}`;
}

export function alertHistoryBlocks(h: EvidenceAlertHistory): Block[] {
  const blocks: Block[] = [{ kind: 'heading', text: ['Alert history'] }];
  if (h.alerts.length === 0) blocks.push({ kind: 'p', content: ['No alert was open in the window.'] });
  else {
    blocks.push({
      kind: 'table',
      columns: [{ label: 'Raised' }, { label: 'Open for' }, { label: 'Severity' }, { label: 'Kind' }, { label: 'Where' }, { label: 'Message' }, { label: 'Acknowledged by' }, { label: 'Silenced by' }, { label: 'Incident' }],
      rows: h.alerts.map((a) => [
        [isoUtc(a.raisedAt)],
        // An alert with no clear in the log is open at the window's end (or its console stopped): never a duration of 0.
        [a.durationMs === null ? 'still open' : duration(a.durationMs)],
        [a.severity],
        [a.kind],
        [a.serviceId ? upstreamKey(a.host, a.serviceId) : a.host],
        [orDash(a.message)],
        [a.ackBy ? `${a.ackBy} at ${isoUtc(a.ackAt)}` : orDash(null)],
        [orDash(a.silencedBy)],
        [orDash(a.incident)],
      ]),
    });
  }
  if (h.truncated) blocks.push({ kind: 'p', content: ['The history was cut at its bound; choose a shorter window for every alert.'] });
  blocks.push({ kind: 'heading', text: ['Silences'] });
  if (h.silences.length === 0) blocks.push({ kind: 'p', content: ['No silence was in force in the window.'] });
  else {
    blocks.push({
      kind: 'table',
      columns: [{ label: 'Silence' }, { label: 'Scope' }, { label: 'Set' }, { label: 'Until' }, { label: 'Set by' }, { label: 'Reason' }, { label: 'Ended early' }],
      rows: h.silences.map((s) => [[s.id], [scope(s)], [isoUtc(s.createdAt)], [isoUtc(s.until)], [s.by], [orDash(s.reason)], [s.endedAt === null ? orDash(null) : `${isoUtc(s.endedAt)} by ${s.endedBy ?? '?'}`]]),
    });
  }
  return blocks;
}
