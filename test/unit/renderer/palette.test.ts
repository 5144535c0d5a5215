import { describe, expect, it } from 'vitest';
import { filterItems, scoreMatch, type PaletteItem } from '../../../src-renderer/src/app/palette-items.js';

const item = (label: string, keywords?: string): PaletteItem => ({ id: label, group: 'Action', label, keywords, run: () => undefined });

describe('command palette matching', () => {
  it('matches subsequences case-insensitively and refuses non-matches', () => {
    expect(scoreMatch('l20', 'Open host l20-poc')).not.toBeNull();
    expect(scoreMatch('OPH', 'Open host l20-poc')).not.toBeNull();
    expect(scoreMatch('xyz', 'Open host l20-poc')).toBeNull();
  });

  it('ranks word starts and contiguous runs first', () => {
    const items = [item('Go to Proxy'), item('Open host tri-gpu'), item('Disconnect tri-gpu')];
    expect(filterItems(items, 'tri').map((i) => i.label)).toEqual(['Open host tri-gpu', 'Disconnect tri-gpu']);
    expect(filterItems(items, 'prox')[0]!.label).toBe('Go to Proxy');
  });

  it('a query word at the start of a word ranks above the same letters inside one ("open tri" → tri-gpu before strix)', () => {
    const hosts = ['strix', 'tri-gpu', 'l20-poc'].map((label) => ({ id: label, group: 'Host' as const, label: `Open host ${label}`, keywords: `ops@127.0.0.1:4${label.length}22`, run: () => undefined }));
    expect(filterItems(hosts, 'open tri')[0]!.id).toBe('tri-gpu');
    expect(filterItems(hosts, 'open str')[0]!.id).toBe('strix');
  });

  it('searches keywords too, and returns everything for an empty query', () => {
    const items = [item('Open host l20-poc', 'ops@203.0.113.10:22'), item('Go to Fleet')];
    expect(filterItems(items, '203.0').map((i) => i.label)).toEqual(['Open host l20-poc']);
    expect(filterItems(items, '')).toHaveLength(2);
  });
});
