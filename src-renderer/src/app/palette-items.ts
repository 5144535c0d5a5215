// What the command palette offers: views, hosts, and console actions, each a
// label to match and a function to run. Pure, so it is unit-tested.
import type { ActionKind, ServiceView } from '../../../src-preload/contract/index.js';
import { sleepView } from '../features/fleet/service-facts.js';

export interface PaletteItem {
  id: string;
  group: 'View' | 'Host' | 'Action';
  label: string;
  /** Extra words that should also match (e.g. a host's address). */
  keywords?: string;
  shortcut?: string;
  run(): void | Promise<void>;
}

/** Case-insensitive subsequence match, scored so that word starts and contiguous runs rank first. */
export function scoreMatch(query: string, text: string): number | null {
  const q = query.trim().toLowerCase();
  if (q === '') return 0;
  const t = text.toLowerCase();
  let score = 0;
  let ti = 0;
  let prev = -2;
  for (const ch of q) {
    if (ch === ' ') continue;
    const at = t.indexOf(ch, ti);
    if (at < 0) return null;
    score += at === prev + 1 ? 3 : 1;
    if (at === 0 || /[\s/._-]/.test(t[at - 1] ?? '')) score += 2;
    prev = at;
    ti = at + 1;
  }
  return score - t.length * 0.01;
}

export function filterItems(items: readonly PaletteItem[], query: string, limit = 12): PaletteItem[] {
  return items
    .map((item) => ({ item, score: scoreMatch(query, `${item.label} ${item.keywords ?? ''}`) }))
    .filter((x): x is { item: PaletteItem; score: number } => x.score !== null)
    .sort((a, b) => b.score - a.score)
    .slice(0, limit)
    .map((x) => x.item);
}

/**
 * The lifecycle actions the palette offers to propose for a service. A
 * llama-server that sleeps and wakes by itself (--sleep-idle-seconds) is
 * offered neither sleep nor wake: the console does not control it.
 */
export function proposalKinds(
  svc: Pick<ServiceView, 'sleep' | 'kind' | 'sleepControl'>,
  /** What the service's lifecycle driver can do, once the Actions view has listed it; unknown: not filtered. */
  supported?: readonly ActionKind[],
): ActionKind[] {
  const sleepWake = sleepView(svc).offersSleepWake;
  const kinds: ActionKind[] = svc.sleep === 'awake' ? (sleepWake ? ['sleep', 'offload', 'restart'] : ['offload', 'restart']) : sleepWake ? ['wake', 'restart'] : ['restart'];
  return supported === undefined ? kinds : kinds.filter((k) => supported.includes(k));
}
