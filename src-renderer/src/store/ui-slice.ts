// Which view and host the operator looks at, and the colour theme.
import type { StateCreator } from 'zustand/vanilla';

// The core views, and any id a feature's view.ts registers (app/views.ts).
export type ViewId = 'fleet' | 'host' | 'proxy' | 'audit' | (string & {});
export type Theme = 'dark' | 'light';

export interface UiSlice {
  ui: { view: ViewId; selectedHost: string | null; theme: Theme };
  /** A request the Proxy view's log is asked to show (a link from another view), until the log takes it. */
  requestFocus: string | null;
  setView(view: ViewId): void;
  /** Opens the Proxy view with its request log searched for this request id. */
  showRequest(id: string): void;
  /** The request asked for, once: the Proxy view's log searches it and the ask is cleared. */
  takeRequestFocus(): string | null;
  selectHost(label: string | null): void;
  setTheme(theme: Theme): void;
  toggleTheme(): void;
}

export function createUiSlice(initialTheme: Theme): StateCreator<UiSlice, [], [], UiSlice> {
  return (set, get) => ({
    ui: { view: 'fleet', selectedHost: null, theme: initialTheme },
    requestFocus: null,
    setView: (view) => set((state) => (state.ui.view === view ? state : { ui: { ...state.ui, view } })),
    showRequest: (id) => set((state) => ({ ui: { ...state.ui, view: 'proxy' }, requestFocus: id })),
    takeRequestFocus: () => {
      const id = get().requestFocus;
      if (id !== null) set({ requestFocus: null });
      return id;
    },
    selectHost: (label) => set((state) => ({ ui: { ...state.ui, selectedHost: label } })),
    setTheme: (theme) => set((state) => ({ ui: { ...state.ui, theme } })),
    toggleTheme: () => set((state) => ({ ui: { ...state.ui, theme: state.ui.theme === 'dark' ? 'light' : 'dark' } })),
  });
}
