// Keyboard movement between tiles laid out by the grid: left/right and j/k
// step through the order, up/down go to the nearest tile in the row above or
// below (as laid out on screen, groups included), Home/End to the ends.
export type NavKey = 'next' | 'prev' | 'up' | 'down' | 'first' | 'last';

export function navKeyOf(e: { key: string; altKey: boolean; ctrlKey: boolean; metaKey: boolean }): NavKey | null {
  if (e.altKey || e.ctrlKey || e.metaKey) return null;
  switch (e.key) {
    case 'ArrowRight':
    case 'j':
      return 'next';
    case 'ArrowLeft':
    case 'k':
      return 'prev';
    case 'ArrowDown':
      return 'down';
    case 'ArrowUp':
      return 'up';
    case 'Home':
      return 'first';
    case 'End':
      return 'last';
    default:
      return null;
  }
}

export interface TileBox {
  readonly key: string;
  readonly x: number;
  readonly y: number;
}

/** The key to move to from `current` (tiles in display order with their centres), or null to stay. */
export function moveFrom(tiles: readonly TileBox[], current: string, nav: NavKey): string | null {
  if (tiles.length === 0) return null;
  const i = Math.max(0, tiles.findIndex((t) => t.key === current));
  if (nav === 'first') return tiles[0]!.key;
  if (nav === 'last') return tiles[tiles.length - 1]!.key;
  if (nav === 'next') return tiles[Math.min(tiles.length - 1, i + 1)]!.key;
  if (nav === 'prev') return tiles[Math.max(0, i - 1)]!.key;
  const here = tiles[i]!;
  const rows = tiles.filter((t) => (nav === 'down' ? t.y > here.y + 1 : t.y < here.y - 1));
  if (rows.length === 0) return null;
  const rowY = nav === 'down' ? Math.min(...rows.map((t) => t.y)) : Math.max(...rows.map((t) => t.y));
  const row = rows.filter((t) => Math.abs(t.y - rowY) <= 1);
  return row.reduce((best, t) => (Math.abs(t.x - here.x) < Math.abs(best.x - here.x) ? t : best)).key;
}
