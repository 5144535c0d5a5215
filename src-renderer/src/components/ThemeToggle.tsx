import { useAppStore } from '../app/app-context.js';

export function ThemeToggle(): React.JSX.Element {
  const theme = useAppStore((s) => s.ui.theme);
  const toggle = useAppStore((s) => s.toggleTheme);
  const next = theme === 'dark' ? 'light' : 'dark';
  return (
    <button type="button" className="button button--ghost" onClick={toggle} aria-label={`Switch to ${next} theme`} data-testid="theme-toggle">
      {theme === 'dark' ? '☀ Light' : '☾ Dark'}
    </button>
  );
}
