// The shell: header, left nav, connection banner and the active view.
import { useEffect, useMemo, useState } from 'react';
import { ConnectionBanner } from '../components/ConnectionBanner.js';
import { StorageBanner } from '../components/StorageBanner.js';
import { AuditView } from '../features/audit/AuditView.js';
import { FleetView } from '../features/fleet/FleetView.js';
import { ProxyView } from '../features/proxy/ProxyView.js';
import { AppHeader } from './AppHeader.js';
import { HostPage } from './HostPage.js';
import { useAppStore } from './app-context.js';
import { ConfigErrorBanner } from './ConfigErrorBanner.js';
import { CommandPalette } from './CommandPalette.js';
import { Nav, VIEWS } from './Nav.js';
import { useShortcuts } from './use-shortcuts.js';
import { PLUGGED_VIEWS } from './views.js';
import { TokenPage } from './TokenPage.js';

export function App(): React.JSX.Element {
  const view = useAppStore((s) => s.ui.view);
  const theme = useAppStore((s) => s.ui.theme);
  const refused = useAppStore((s) => s.app.connection.status === 'unauthorized');
  const setView = useAppStore((s) => s.setView);
  const [paletteOpen, setPaletteOpen] = useState(false);
  const shortcuts = useMemo(
    () => ({
      openPalette: () => setPaletteOpen(true),
      openView: (i: number) => {
        const target = VIEWS[i];
        if (target) setView(target.id);
      },
    }),
    [setView],
  );
  useShortcuts(shortcuts);

  useEffect(() => {
    document.documentElement.dataset['theme'] = theme;
    try {
      localStorage.setItem('gpu-console.theme', theme);
    } catch {
      // storage unavailable: the choice lasts for this page only
    }
  }, [theme]);

  if (refused) return <TokenPage reason="refused" />;

  return (
    <div className="app-shell">
      <AppHeader />
      <Nav />
      {paletteOpen ? <CommandPalette onClose={() => setPaletteOpen(false)} /> : null}
      <main className="app-main" id="main">
        <ConnectionBanner />
        <ConfigErrorBanner />
        <StorageBanner />
        {renderView(view)}
      </main>
    </div>
  );
}

function renderView(view: string): React.JSX.Element {
  if (view === 'fleet') return <FleetView />;
  if (view === 'host') return <HostPage />;
  if (view === 'proxy') return <ProxyView />;
  const plugged = PLUGGED_VIEWS.find((v) => v.id === view);
  if (plugged) return <plugged.Component />;
  return <AuditView />;
}
