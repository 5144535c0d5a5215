// The shell: header, left nav, connection banner and the active view.
import { useEffect } from 'react';
import { ConnectionBanner } from '../components/ConnectionBanner.js';
import { AuditView } from '../features/audit/AuditView.js';
import { FleetView } from '../features/fleet/FleetView.js';
import { ProxyView } from '../features/proxy/ProxyView.js';
import { AppHeader } from './AppHeader.js';
import { HostPage } from './HostPage.js';
import { useAppStore } from './app-context.js';
import { ConfigErrorBanner } from './ConfigErrorBanner.js';
import { Nav } from './Nav.js';
import { PLUGGED_VIEWS } from './views.js';
import { TokenPage } from './TokenPage.js';

export function App(): React.JSX.Element {
  const view = useAppStore((s) => s.ui.view);
  const theme = useAppStore((s) => s.ui.theme);
  const refused = useAppStore((s) => s.app.connection.status === 'unauthorized');

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
      <main className="app-main" id="main">
        <ConnectionBanner />
        <ConfigErrorBanner />
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
