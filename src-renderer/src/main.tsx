// Entry: choose the transport, build the store, wire them, render.
import './zod-config.js';
import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import './styles.css';
import { App } from './app/App.js';
import { AppContext, type AppServices } from './app/app-context.js';
import { TokenPage } from './app/TokenPage.js';
import { attachTokHistory, TokHistory } from './features/fleet/tok-history.js';
import { createAppStore } from './store/store.js';
import type { Theme } from './store/ui-slice.js';
import { wireTransport } from './store/wire.js';
import { pickTransport } from './transport/pick-transport.js';

function initialTheme(): Theme {
  try {
    const saved = localStorage.getItem('gpu-console.theme');
    if (saved === 'dark' || saved === 'light') return saved;
  } catch {
    // no storage: fall through to the system preference
  }
  return window.matchMedia?.('(prefers-color-scheme: light)').matches ? 'light' : 'dark';
}

const rootElement = document.getElementById('root');
if (rootElement === null) throw new Error('#root is missing from index.html');
const theme = initialTheme();
document.documentElement.dataset['theme'] = theme;
const root = createRoot(rootElement);

const picked = pickTransport();
if (picked.kind === 'no-token') {
  root.render(
    <StrictMode>
      <TokenPage reason="missing" />
    </StrictMode>,
  );
} else {
  const { transport } = picked;
  const store = createAppStore({ transportKind: transport.kind, theme, connection: { status: 'connecting', attempt: 0, nextRetryAt: null, lastError: null } });
  const tokHistory = new TokHistory();
  const services: AppServices = { store, transport, tokHistory };
  const disposers = [attachTokHistory(store, tokHistory), wireTransport(transport, store)];
  window.addEventListener('pagehide', () => {
    for (const dispose of disposers.splice(0)) dispose();
    transport.dispose();
  });
  root.render(
    <StrictMode>
      <AppContext.Provider value={services}>
        <App />
      </AppContext.Provider>
    </StrictMode>,
  );
}
