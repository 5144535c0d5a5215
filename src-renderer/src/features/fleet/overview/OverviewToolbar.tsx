// Search, filters, grouping and sort of the overview, and the sentence that
// says what it shows.
import type { OverviewPrefs, SortKey, StateFilter } from './overview-query.js';
import { SORT_KEYS, SORT_LABELS, STATE_FILTERS } from './overview-query.js';

export interface OverviewToolbarProps {
  readonly prefs: OverviewPrefs;
  readonly onPrefs: (change: Partial<OverviewPrefs>) => void;
  readonly search: string;
  readonly onSearch: (text: string) => void;
  readonly searchRef: React.RefObject<HTMLInputElement | null>;
  readonly onSearchKey: (e: React.KeyboardEvent<HTMLInputElement>) => void;
  readonly vendors: readonly string[];
  readonly models: readonly string[];
  readonly tags: readonly string[];
}

const STATE_LABELS: Record<StateFilter, string> = { all: 'All states', trouble: 'Needs a look', healthy: 'Healthy', down: 'Down or untrusted' };

export function OverviewToolbar(p: OverviewToolbarProps): React.JSX.Element {
  const { prefs, onPrefs } = p;
  return (
    <div className="ov-toolbar">
      <input
        ref={p.searchRef}
        type="search"
        className="ov-search"
        placeholder="Search host, model, service, tag  ( / )"
        aria-label="Search hosts by name, model, service or tag"
        value={p.search}
        onChange={(e) => p.onSearch(e.target.value)}
        onKeyDown={p.onSearchKey}
        data-testid="ov-search"
        maxLength={200}
      />
      <select aria-label="Filter by state" value={prefs.state} onChange={(e) => onPrefs({ state: e.target.value as StateFilter })} data-testid="ov-filter-state">
        {STATE_FILTERS.map((s) => (
          <option key={s} value={s}>
            {STATE_LABELS[s]}
          </option>
        ))}
      </select>
      <select aria-label="Filter by GPU vendor" value={prefs.vendor} onChange={(e) => onPrefs({ vendor: e.target.value })} data-testid="ov-filter-vendor">
        <option value="all">All vendors</option>
        {p.vendors.map((v) => (
          <option key={v} value={v}>
            {v === 'nvidia' ? 'NVIDIA' : v === 'amd' ? 'AMD' : v}
          </option>
        ))}
      </select>
      <select aria-label="Filter by model" value={prefs.model} onChange={(e) => onPrefs({ model: e.target.value })} data-testid="ov-filter-model" className="ov-model-filter">
        <option value="all">All models</option>
        {p.models.map((m) => (
          <option key={m} value={m}>
            {m}
          </option>
        ))}
      </select>
      <select aria-label="Group hosts" value={prefs.group} onChange={(e) => onPrefs({ group: e.target.value as OverviewPrefs['group'] })} data-testid="ov-group">
        <option value="none">No grouping</option>
        <option value="model">Group by model</option>
        {p.tags.map((t) => (
          <option key={t} value={`tag:${t}`}>
            Group by {t}
          </option>
        ))}
      </select>
      <select aria-label="Sort hosts by" value={prefs.sort} onChange={(e) => onPrefs({ sort: e.target.value as SortKey })} data-testid="ov-sort">
        {SORT_KEYS.map((k) => (
          <option key={k} value={k}>
            {SORT_LABELS[k]}
          </option>
        ))}
      </select>
      <button
        type="button"
        className="button ov-dir"
        aria-label={prefs.descending ? 'Sorted descending; sort ascending' : 'Sorted ascending; sort descending'}
        title={prefs.descending ? 'Descending' : 'Ascending'}
        onClick={() => onPrefs({ descending: !prefs.descending })}
        data-testid="ov-sort-dir"
      >
        {prefs.descending ? '↓' : '↑'}
      </button>
    </div>
  );
}
