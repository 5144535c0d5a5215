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

const LIGHT: ChartTheme = {
  text: '#1f2633',
  muted: '#5b6575',
  border: '#dde2ea',
  bg: '#ffffff',
  series: ['#2563eb', '#1a7f37', '#9a6700', '#cf222e', '#7c3aed', ...FALLBACK.series.slice(5)],
};

/**
 * `theme` names the palette being read: pass it so callers re-read when it
 * changes. The page switches <html data-theme> in an effect, after the render
 * that reads this: while the attribute still names the other theme, the
 * stylesheet's palette for `theme` is used (light grid lines on a dark chart otherwise).
 */
/** What is read off the page, typed without the DOM library so that node-side tests can import this file. */
export interface ThemeSource {
  dataset?: Record<string, string | undefined>;
}
const page = globalThis as unknown as { document?: { documentElement: ThemeSource }; getComputedStyle?: (el: ThemeSource) => { getPropertyValue(name: string): string } };

export function readChartTheme(_theme: 'dark' | 'light', element: ThemeSource | null = page.document?.documentElement ?? null): ChartTheme {
  const own = _theme === 'light' ? LIGHT : FALLBACK;
  if (element === null || page.getComputedStyle === undefined) return own;
  const shown = element.dataset?.['theme'];
  if (shown !== undefined && shown !== _theme) return own;
  const css = page.getComputedStyle(element);
  const v = (name: string, fallback: string): string => css.getPropertyValue(name).trim() || fallback;
  return {
    text: v('--text', FALLBACK.text),
    muted: v('--muted', FALLBACK.muted),
    border: v('--border', FALLBACK.border),
    bg: v('--bg-raised', FALLBACK.bg),
    series: [v('--accent', FALLBACK.series[0]!), v('--ok', FALLBACK.series[1]!), v('--warn', FALLBACK.series[2]!), v('--error', FALLBACK.series[3]!), v('--info', FALLBACK.series[4]!), ...FALLBACK.series.slice(5)],
  };
}
