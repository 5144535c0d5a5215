// Canvas needs concrete colours: read them from the CSS variables of the
// current theme (styles.css), with the dark palette as a fallback.
import type { ChartTheme } from './panel-option.js';

const FALLBACK: ChartTheme = {
  text: '#d9dee7',
  muted: '#8a93a3',
  border: '#252c37',
  bg: '#141820',
  series: ['#6ea8fe', '#3fb950', '#d9a53a', '#f47067', '#b392f0', '#8fbcff', '#56d4dd', '#e3b341'],
};

/** `theme` names the palette being read: pass it so callers re-read when it changes. */
export function readChartTheme(
  _theme: 'dark' | 'light',
  element: Element | null = typeof document === 'undefined' ? null : document.documentElement,
): ChartTheme {
  if (element === null || typeof getComputedStyle === 'undefined') return FALLBACK;
  const css = getComputedStyle(element);
  const v = (name: string, fallback: string): string => css.getPropertyValue(name).trim() || fallback;
  return {
    text: v('--text', FALLBACK.text),
    muted: v('--muted', FALLBACK.muted),
    border: v('--border', FALLBACK.border),
    bg: v('--bg-raised', FALLBACK.bg),
    series: [v('--accent', FALLBACK.series[0]!), v('--ok', FALLBACK.series[1]!), v('--warn', FALLBACK.series[2]!), v('--error', FALLBACK.series[3]!), v('--info', FALLBACK.series[4]!), ...FALLBACK.series.slice(5)],
  };
}
