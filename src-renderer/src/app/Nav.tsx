import { useAppStore } from './app-context.js';
import type { ViewId } from '../store/ui-slice.js';
import { PLUGGED_VIEWS } from './views.js';

/** Every view in nav order; Alt+1…9 opens the n-th (see use-shortcuts.ts). */
export const VIEWS: ReadonlyArray<{ id: ViewId; label: string; glyph: string }> = [
  { id: 'fleet', label: 'Fleet', glyph: '▦', order: 10 },
  { id: 'host', label: 'Hosts', glyph: '◫', order: 20 },
  { id: 'proxy', label: 'Proxy', glyph: '⇄', order: 30 },
  { id: 'audit', label: 'Audit', glyph: '☰', order: 90 },
  ...PLUGGED_VIEWS,
].sort((a, b) => a.order - b.order);

export function Nav(): React.JSX.Element {
  const view = useAppStore((s) => s.ui.view);
  const setView = useAppStore((s) => s.setView);
  return (
    <nav className="app-nav" aria-label="Views">
      <ul>
        {VIEWS.map((item, i) => (
          <li key={item.id}>
            <button
              type="button"
              className={`app-nav__item${view === item.id ? ' app-nav__item--active' : ''}`}
              aria-current={view === item.id ? 'page' : undefined}
              onClick={() => setView(item.id)}
              data-testid={`nav-${item.id}`}
              aria-keyshortcuts={i < 9 ? `Alt+${i + 1}` : undefined}
              title={i < 9 ? `${item.label} (Alt+${i + 1})` : item.label}
            >
              <span className="app-nav__glyph" aria-hidden="true">
                {item.glyph}
              </span>
              {item.label}
            </button>
          </li>
        ))}
      </ul>
    </nav>
  );
}
