// Which view and host the operator looks at, and the colour theme.
import type { StateCreator } from 'zustand/vanilla';

// The core views, and any id a feature's view.ts registers (app/views.ts).
export type ViewId = 'fleet' | 'host' | 'proxy' | 'audit' | (string & {});
export type Theme = 'dark' | 'light';

export interface UiSlice {
  ui: { view: ViewId; selectedHost: string | null; theme: Theme };
  setView(view: ViewId): void;
  selectHost(label: string | null): void;
  setTheme(theme: Theme): void;
  toggleTheme(): void;
}

export function createUiSlice(initialTheme: Theme): StateCreator<UiSlice, [], [], UiSlice> {
  return (set) => ({
    ui: { view: 'fleet', selectedHost: null, theme: initialTheme },
    setView: (view) => set((state) => (state.ui.view === view ? state : { ui: { ...state.ui, view } })),
    selectHost: (label) => set((state) => ({ ui: { ...state.ui, selectedHost: label } })),
    setTheme: (theme) => set((state) => ({ ui: { ...state.ui, theme } })),
    toggleTheme: () => set((state) => ({ ui: { ...state.ui, theme: state.ui.theme === 'dark' ? 'light' : 'dark' } })),
  });
}
