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

/**
 * Case-insensitive subsequence match, scored so that word starts and
 * contiguous runs rank first, and a query word found whole at the start of a
 * word of the text ranks above one found inside a word ("tri" → "tri-gpu"
 * before "strix").
 */
export function scoreMatch(query: string, text: string): number | null {
  const q = query.trim().toLowerCase();
  if (q === '') return 0;
  const t = text.toLowerCase();
  let score = 0;
  for (const word of q.split(/\s+/)) score += wholeWordBonus(word, t);
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

/** 5 when `word` starts a word of `text`, 2 when it is only inside one, 0 when absent. */
function wholeWordBonus(word: string, text: string): number {
  let bonus = 0;
  for (let at = text.indexOf(word); at >= 0; at = text.indexOf(word, at + 1)) {
    if (at === 0 || /[\s/._-]/.test(text[at - 1]!)) return 5;
    bonus = 2;
  }
  return bonus;
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
