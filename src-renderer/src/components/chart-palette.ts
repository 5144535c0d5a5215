import type { Theme } from '../store/ui-slice.js';

/** Canvas needs concrete colours; these mirror --accent in styles.css. */
export function chartPalette(theme: Theme): { line: string; area: string } {
  return theme === 'dark'
    ? { line: '#6ea8fe', area: 'rgba(110, 168, 254, 0.16)' }
    : { line: '#2563eb', area: 'rgba(37, 99, 235, 0.12)' };
}
