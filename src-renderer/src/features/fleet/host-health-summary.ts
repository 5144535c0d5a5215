// The host card's link to its host view, in words: what the host view explains.
import type { FaultCounts } from './host-health-facts.js';

/** "2 process flags · 1 Xid · GPU faults not read yet": what the host view explains. */
export function issueSummary(c: FaultCounts): { text: string; count: number; title: string } {
  const parts: string[] = [];
  const unread: string[] = [];
  const add = (n: number | null, one: string, many: string, what: string): void => {
    if (n === null) unread.push(what);
    else if (n > 0) parts.push(`${n} ${n === 1 ? one : many}`);
  };
  add(c.processFlags, 'process flag', 'process flags', 'GPU processes');
  add(c.xid, 'Xid', 'Xids', 'kernel log');
  add(c.ecc, 'GPU with ECC errors', 'GPUs with ECC errors', 'ECC');
  add(c.throttling, 'GPU throttling', 'GPUs throttling', 'throttle reasons');
  const count = parts.length;
  const faultsUnread = unread.filter((u) => u !== 'GPU processes').length;
  const quiet = [c.processFlags === null ? 'processes not read yet' : 'no process flag', faultsUnread === 3 ? 'GPU faults not read yet' : faultsUnread > 0 ? 'no GPU fault in what was read' : 'no GPU fault'];
  const text = count > 0 ? parts.join(' · ') : quiet.join(' · ');
  const title = `${text}${unread.length > 0 ? `; not read yet: ${unread.join(', ')}` : ''}. Opens the host view.`;
  return { text, count, title };
}
