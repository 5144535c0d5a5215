// How many characters of tile text fit on one line of a tile, measured from
// the laid-out tile and the tile's font, so the reason line is shortened in
// words ("…", the whole text in the title and the card) rather than clipped.
import { useEffect, useState } from 'react';

/** A line of the sort tiles print, wide letters included, to average a character's width. */
const SAMPLE = 'link lost · SSH_CONNECT_TIMEOUT svc0 down GPU 3 91 °C 2 alerts: KV cache';
const FALLBACK_CHARS = 22;

function measure(grid: HTMLElement): number | null {
  const tile = grid.querySelector<HTMLElement>('.ov-tile');
  if (!tile) return null;
  const style = getComputedStyle(tile);
  const inner = tile.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight);
  const ctx = document.createElement('canvas').getContext('2d');
  if (!ctx || inner <= 0) return null;
  ctx.font = `${style.fontWeight} ${style.fontSize} ${style.fontFamily}`;
  const perChar = ctx.measureText(SAMPLE).width / SAMPLE.length;
  // 10 % to spare: a line of wide letters must still fit.
  return perChar > 0 ? Math.max(8, Math.floor(inner / (perChar * 1.1))) : null;
}

export function useLineChars(gridRef: React.RefObject<HTMLElement | null>, ready: boolean): number {
  const [chars, setChars] = useState(FALLBACK_CHARS);
  useEffect(() => {
    const grid = gridRef.current;
    if (!grid || !ready) return undefined;
    const update = () => {
      const n = measure(grid);
      if (n !== null) setChars(n);
    };
    update();
    const ro = new ResizeObserver(update);
    ro.observe(grid);
    return () => ro.disconnect();
  }, [gridRef, ready]);
  return chars;
}
