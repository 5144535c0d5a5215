// The fleet at a glance: every host as a small tile, trouble first, with
// search, filters, grouping, sort and keyboard movement; a tile opens the
// host's card. Tiles are memoised on their row, and rows are reused while a
// host's view is the same object, so a tick re-renders only what changed.
import { useCallback, useEffect, useMemo, useRef, useState } from 'react';
import type { HostView } from '../../../../../src-preload/contract/index.js';
import { useAppStore, useServices } from '../../../app/app-context.js';
import { useAlerts } from '../../host/use-alerts.js';
import { HostDrawer } from './HostDrawer.js';
import { alertSummaries, queuedWhileAsleep } from './host-trouble.js';
import { describeView, overviewView, tagNames, type OverviewPrefs } from './overview-query.js';
import { OverviewRows } from './overview-row.js';
import { OverviewTile } from './OverviewTile.js';
import { OverviewToolbar } from './OverviewToolbar.js';
import { moveFrom, navKeyOf, type TileBox } from './tile-nav.js';
import { useLineChars } from './use-line-chars.js';
import './overview.css';

const NO_HOSTS: readonly HostView[] = [];
const tileKey = (group: string, label: string): string => `${group}|${label}`;

export interface FleetOverviewProps {
  readonly prefs: OverviewPrefs;
  readonly onPrefs: (change: Partial<OverviewPrefs>) => void;
  /** The layout switch and import button, at the end of the toolbar. */
  readonly tools?: React.ReactNode;
}

export function FleetOverview({ prefs, onPrefs, tools }: FleetOverviewProps): React.JSX.Element {
  const { transport } = useServices();
  const hosts = useAppStore((s) => s.fleet.snapshot?.hosts ?? NO_HOSTS);
  const stats = useAppStore((s) => s.proxy.stats);
  const setView = useAppStore((s) => s.setView);
  const selectHost = useAppStore((s) => s.selectHost);
  const alerts = useAlerts(transport);
  const [search, setSearch] = useState('');
  const [focusKey, setFocusKey] = useState<string | null>(null);
  const [open, setOpen] = useState<{ label: string; key: string } | null>(null);
  const gridRef = useRef<HTMLDivElement>(null);
  const searchRef = useRef<HTMLInputElement>(null);
  const rowsCache = useRef(new OverviewRows()).current;

  const alertMap = useMemo(() => alertSummaries(alerts), [alerts]);
  const asleep = useMemo(() => queuedWhileAsleep(stats), [stats]);
  const rows = useMemo(() => rowsCache.rows(hosts, alertMap, asleep), [rowsCache, hosts, alertMap, asleep]);
  const view = useMemo(() => overviewView(rows, prefs, search), [rows, prefs, search]);
  const choices = useMemo(
    () => ({
      vendors: [...new Set(rows.map((r) => r.vendor).filter((v): v is NonNullable<typeof v> => v !== null))].sort(),
      models: [...new Set(rows.flatMap((r) => r.models))].sort(),
      tags: tagNames(rows),
    }),
    [rows],
  );
  const keys = useMemo(() => view.groups.flatMap((g) => g.rows.map((r) => tileKey(g.key, r.label))), [view]);
  const lineChars = useLineChars(gridRef, view.shown > 0);
  const current = focusKey !== null && keys.includes(focusKey) ? focusKey : (keys[0] ?? null);

  const focusTile = useCallback((key: string) => {
    setFocusKey(key);
    gridRef.current?.querySelector<HTMLElement>(`[data-tile-key="${CSS.escape(key)}"] button`)?.focus();
  }, []);
  const openHost = useCallback((label: string, key: string) => setOpen({ label, key }), []);
  const closeDrawer = useCallback(() => {
    const back = open?.key;
    setOpen(null);
    if (back) requestAnimationFrame(() => focusTile(back));
  }, [open, focusTile]);

  // "/" finds, from anywhere in the view but a text field.
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      const t = e.target as HTMLElement | null;
      if (e.key !== '/' || e.ctrlKey || e.metaKey || e.altKey || t?.closest('input, textarea, select, [contenteditable="true"]')) return;
      e.preventDefault();
      searchRef.current?.focus();
    };
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, []);

  const onGridKey = (e: React.KeyboardEvent<HTMLDivElement>) => {
    const nav = navKeyOf(e);
    if (nav === null || current === null) return;
    const boxes: TileBox[] = [...(gridRef.current?.querySelectorAll<HTMLElement>('[data-tile-key]') ?? [])].map((el) => {
      const r = el.getBoundingClientRect();
      return { key: el.dataset.tileKey ?? '', x: r.left + r.width / 2, y: r.top };
    });
    const next = moveFrom(boxes, current, nav);
    if (next === null) return;
    e.preventDefault();
    focusTile(next);
  };
  const onSearchKey = (e: React.KeyboardEvent<HTMLInputElement>) => {
    if (e.key === 'Escape' && search !== '') {
      e.preventDefault();
      setSearch('');
    } else if ((e.key === 'Enter' || e.key === 'ArrowDown') && keys[0] !== undefined) {
      e.preventDefault();
      focusTile(keys[0]);
    }
  };

  const filtered = search.trim() !== '' || prefs.state !== 'all' || prefs.vendor !== 'all' || prefs.model !== 'all';
  return (
    <div className="ov">
      <OverviewToolbar prefs={prefs} onPrefs={onPrefs} search={search} onSearch={setSearch} searchRef={searchRef} onSearchKey={onSearchKey} {...choices} />
      <div className="ov-status">
        <p className="ov-shows muted" data-testid="ov-shows" aria-live="polite">
          {describeView(view, prefs, search)}
          {filtered ? (
            <>
              {' · '}
              <button
                type="button"
                className="link-button"
                onClick={() => {
                  setSearch('');
                  onPrefs({ state: 'all', vendor: 'all', model: 'all' });
                }}
                data-testid="ov-clear"
              >
                show all
              </button>
            </>
          ) : null}
        </p>
        <div className="ov-status__tools">{tools}</div>
      </div>
      {view.shown === 0 ? (
        <p className="empty-state" data-testid="ov-none">
          No host matches. {rows.length} hosts are hidden by the search or filters above.
        </p>
      ) : (
        <div className="ov-groups" ref={gridRef} onKeyDown={onGridKey} data-testid="ov-grid">
          {view.groups.map((g) => (
            <section key={g.key} className="ov-group" aria-label={g.title ?? 'Hosts'} data-testid={g.title === null ? undefined : `ov-group-${g.title}`}>
              {g.title !== null ? (
                <h2 className="ov-group__title">
                  {g.title} <span className="muted">· {g.rows.length}</span>
                </h2>
              ) : null}
              <ul className="ov-grid">
                {g.rows.map((r) => {
                  const key = tileKey(g.key, r.label);
                  return (
                    <li key={key} data-tile-key={key}>
                      <OverviewTile row={r} tileKey={key} lineChars={lineChars} focused={key === current} onOpen={openHost} onFocusTile={setFocusKey} />
                    </li>
                  );
                })}
              </ul>
            </section>
          ))}
        </div>
      )}
      {open !== null ? (
        <HostDrawer
          label={open.label}
          onClose={closeDrawer}
          onOpenHostView={(label) => {
            selectHost(label);
            setView('host');
          }}
        />
      ) : null}
    </div>
  );
}
