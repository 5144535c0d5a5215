// Global keyboard shortcuts: Ctrl/Cmd+K opens the command palette; Alt+1…9
// opens the n-th view. Ignored while typing in a field (except the palette key).
import { useEffect } from 'react';

export function isTypingTarget(target: EventTarget | null): boolean {
  if (!(target instanceof HTMLElement)) return false;
  return target.isContentEditable || ['INPUT', 'TEXTAREA', 'SELECT'].includes(target.tagName);
}

export function useShortcuts(handlers: { openPalette(): void; openView(index: number): void }): void {
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      if ((e.ctrlKey || e.metaKey) && !e.altKey && e.key.toLowerCase() === 'k') {
        e.preventDefault();
        handlers.openPalette();
        return;
      }
      if (isTypingTarget(e.target)) return;
      if (e.altKey && !e.ctrlKey && !e.metaKey && /^Digit[1-9]$/.test(e.code)) {
        e.preventDefault();
        handlers.openView(Number(e.code.slice(5)) - 1);
      }
    };
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, [handlers]);
}
