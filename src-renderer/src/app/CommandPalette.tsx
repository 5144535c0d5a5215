// Ctrl/Cmd+K: jump to a view or host, or run a console action, from the
// keyboard. An accessible combobox: the input owns the listbox, arrows move
// the active option, Enter runs it, Escape closes and gives focus back.
import { useEffect, useMemo, useRef, useState } from 'react';
import { useAppStore, useServices } from './app-context.js';
import { VIEWS } from './Nav.js';
import { filterItems, proposalKinds, type PaletteItem } from './palette-items.js';

export function CommandPalette({ onClose }: { onClose: () => void }): React.JSX.Element {
  const { transport } = useServices();
  const setView = useAppStore((s) => s.setView);
  const selectHost = useAppStore((s) => s.selectHost);
  const toggleTheme = useAppStore((s) => s.toggleTheme);
  // Select the (tick-stable) host array and derive below: mapping inside the
  // selector would make new objects on every read and never settle.
  const hostViews = useAppStore((s) => s.fleet.snapshot?.hosts);
  const targets = useAppStore((s) => s.actions.targets);
  const supportedBy = useMemo(() => new Map(targets.map((t) => [t.upstream, t.supported])), [targets]);
  const hosts = useMemo(
    () => (hostViews ?? []).map((h) => ({ label: h.label, address: h.address, state: h.state, services: h.services.map((s) => ({ id: s.id, model: s.model, sleep: s.sleep, kind: s.kind, sleepControl: s.sleepControl })) })),
    [hostViews],
  );
  const [query, setQuery] = useState('');
  const [active, setActive] = useState(0);
  const [error, setError] = useState<string | null>(null);
  const inputRef = useRef<HTMLInputElement>(null);
  const returnFocus = useRef<Element | null>(document.activeElement);

  const items = useMemo<PaletteItem[]>(() => {
    const list: PaletteItem[] = VIEWS.map((v, i) => ({
      id: `view:${v.id}`,
      group: 'View',
      label: `Go to ${v.label}`,
      shortcut: i < 9 ? `Alt+${i + 1}` : undefined,
      run: () => setView(v.id),
    }));
    for (const h of hosts) {
      list.push({ id: `host:${h.label}`, group: 'Host', label: `Open host ${h.label}`, keywords: h.address, run: () => (selectHost(h.label), setView('host')) });
      list.push(
        h.state === 'connected' || h.state === 'connecting' || h.state === 'reconnecting'
          ? { id: `disconnect:${h.label}`, group: 'Action', label: `Disconnect ${h.label}`, run: () => transport.invoke('hosts.disconnect', { label: h.label }).then(() => undefined) }
          : { id: `connect:${h.label}`, group: 'Action', label: `Connect ${h.label}`, run: () => transport.invoke('hosts.connect', { label: h.label }).then(() => undefined) },
      );
    }
    // Lifecycle changes are only ever proposed from here: the Actions view asks for the approval.
    for (const h of hosts) {
      for (const svc of h.services) {
        const upstream = `${h.label}/${svc.id}`;
        for (const kind of proposalKinds(svc, supportedBy.get(upstream))) {
          list.push({
            id: `propose:${kind}:${upstream}`,
            group: 'Action',
            label: `Propose ${kind} of ${upstream}`,
            keywords: svc.model,
            run: () =>
              transport.invoke('actions.propose', { upstream, kind, reason: 'proposed from the command palette' }).then(() => setView('actions')),
          });
        }
      }
    }
    list.push({ id: 'theme', group: 'Action', label: 'Toggle light / dark theme', run: () => toggleTheme() });
    list.push({ id: 'verify', group: 'Action', label: 'Verify the audit chain', keywords: 'tamper hash', run: () => setView('audit') });
    return list;
  }, [hosts, supportedBy, setView, selectHost, toggleTheme, transport]);

  const shown = useMemo(() => filterItems(items, query), [items, query]);

  useEffect(() => {
    inputRef.current?.focus();
    const back = returnFocus.current;
    return () => {
      if (back instanceof HTMLElement) back.focus();
    };
  }, []);
  useEffect(() => setActive(0), [query]);

  const runItem = async (item: PaletteItem | undefined) => {
    if (!item) return;
    try {
      await item.run();
      onClose();
    } catch (e) {
      setError((e as Error).message);
    }
  };

  const onKeyDown = (e: React.KeyboardEvent) => {
    if (e.key === 'Escape') {
      e.preventDefault();
      onClose();
    } else if (e.key === 'ArrowDown') {
      e.preventDefault();
      setActive((a) => Math.min(shown.length - 1, a + 1));
    } else if (e.key === 'ArrowUp') {
      e.preventDefault();
      setActive((a) => Math.max(0, a - 1));
    } else if (e.key === 'Enter') {
      e.preventDefault();
      void runItem(shown[active]);
    }
  };

  const optionId = (i: number) => `palette-option-${i}`;
  return (
    <div className="palette__backdrop" onMouseDown={(e) => e.target === e.currentTarget && onClose()}>
      <div className="palette" role="dialog" aria-modal="true" aria-label="Command palette" data-testid="command-palette">
        <input
          ref={inputRef}
          className="palette__input"
          role="combobox"
          aria-expanded="true"
          aria-controls="palette-list"
          aria-activedescendant={shown.length ? optionId(active) : undefined}
          aria-autocomplete="list"
          placeholder="Type a view, host or action…"
          value={query}
          onChange={(e) => setQuery(e.target.value)}
          onKeyDown={onKeyDown}
          data-testid="command-palette-input"
        />
        {error ? <p className="inline-error">{error}</p> : null}
        <ul id="palette-list" className="palette__list" role="listbox" aria-label="Commands">
          {shown.map((item, i) => (
            <li
              key={item.id}
              id={optionId(i)}
              role="option"
              aria-selected={i === active}
              className={`palette__item${i === active ? ' palette__item--active' : ''}`}
              onMouseEnter={() => setActive(i)}
              onClick={() => void runItem(item)}
            >
              <span className="palette__group">{item.group}</span>
              <span className="palette__label">{item.label}</span>
              {item.shortcut ? <kbd className="palette__kbd">{item.shortcut}</kbd> : null}
            </li>
          ))}
          {shown.length === 0 ? <li className="muted palette__empty">No match</li> : null}
        </ul>
      </div>
    </div>
  );
}
