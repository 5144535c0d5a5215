import { describe, expect, it } from 'vitest';
import { StorageHealthSchema, type StorageHealth } from '../../../src-preload/contract/index.js';
import { formatFreeBytes, storageBannerText } from '../../../src-renderer/src/components/storage-banner-lines.js';

// The storage banner (issue #33 item 3): shown only while writes fail; it names the folder, what it has
// left (unknown said, never 0), since when, and what each writer drops, holds or refuses.

// The node typecheck has no JSX: the component is loaded by a specifier it does not resolve (as alert-list.test.ts does).
const COMPONENT = '../../../src-renderer/src/components/StorageBanner.js';
const REACT = 'react';
const REACT_DOM_SERVER = 'react-dom/server';
type Props = { view: StorageHealth; nowMs: number };
const { StorageBannerView } = (await import(COMPONENT)) as { StorageBannerView: (p: Props) => unknown };
const { createElement } = (await import(REACT)) as { createElement(c: (p: Props) => unknown, p: Props): unknown };
const { renderToStaticMarkup } = (await import(REACT_DOM_SERVER)) as { renderToStaticMarkup(el: unknown): string };

const NOW = Date.UTC(2026, 11, 5, 11, 0, 0);
const full: StorageHealth = StorageHealthSchema.parse({
  state: 'full',
  folder: '/var/lib/gpu-console',
  freeBytes: 12 * 1024,
  checkedAt: NOW,
  since: NOW - 60_000,
  failing: [
    { writer: 'requests', failingSince: NOW - 60_000, code: 'SQLITE_FULL', dropped: 1234, pending: 10_000 },
    { writer: 'telemetry', failingSince: NOW - 50_000, code: 'SQLITE_FULL', dropped: 0, pending: 6 },
    { writer: 'audit', failingSince: NOW - 10_000, code: 'SQLITE_FULL', dropped: null, pending: null },
  ],
  recoveredAt: null,
});

describe('storage banner', () => {
  it('says nothing while writes land', () => {
    const ok = StorageHealthSchema.parse({ ...full, state: 'ok', since: null, failing: [], recoveredAt: NOW });
    expect(storageBannerText(ok, NOW)).toBeNull();
    expect(renderToStaticMarkup(createElement(StorageBannerView, { view: ok, nowMs: NOW }))).toBe('');
  });

  it('a full folder: which one, what is left, and per writer what is dropped, waiting or refused', () => {
    const text = storageBannerText(full, NOW)!;
    expect(text.title).toBe('Data folder full');
    expect(text.folder).toBe('/var/lib/gpu-console');
    expect(text.detail).toMatch(/^12 KiB free · since \d\d:\d\d:\d\d UTC/);
    expect(text.lines).toEqual([
      `Request log: ${(1234).toLocaleString()} dropped since start, ${(10_000).toLocaleString()} waiting to be written (SQLITE_FULL)`,
      'Telemetry history: 0 dropped since start, 6 waiting to be written (SQLITE_FULL)',
      'Audit log: cannot be written — approvals, proposals and other audited changes are refused until space returns (SQLITE_FULL)',
    ]);
    const html = renderToStaticMarkup(createElement(StorageBannerView, { view: full, nowMs: NOW }));
    expect(html).toContain('role="alert"');
    expect(html).toContain('<code>/var/lib/gpu-console</code>');
    expect(html).toContain('Free space in this folder: writes resume by themselves.');
  });

  it('an I/O error is not called full; unknown free space is said, never 0', () => {
    const io = storageBannerText({ ...full, state: 'io-error', freeBytes: null }, NOW)!;
    expect(io.title).toBe('Data folder refuses writes (I/O error)');
    expect(io.detail).toMatch(/^free space unknown/);
    expect([0, 1023, 1536, 10 * 1024 ** 2].map(formatFreeBytes)).toEqual(['0 B free', '1023 B free', '1.5 KiB free', '10 MiB free']);
  });
});
