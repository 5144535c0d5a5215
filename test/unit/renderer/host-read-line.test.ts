import { describe, expect, it } from 'vitest';
import type { HostReadView } from '../../../src-preload/contract/index.js';

// The host view's line saying how the host is read (issue #31): one command a poll, or tunnels with the
// reason the console fell back for; a clock minutes off is said, never silently used.

// The node typecheck has no JSX: the component is loaded by a specifier it does not resolve (as storage-banner.test.ts does).
const COMPONENT = '../../../src-renderer/src/features/host/HostReadLine.js';
const REACT = 'react';
const REACT_DOM_SERVER = 'react-dom/server';
type Props = { read: HostReadView | undefined };
const { HostReadLine } = (await import(COMPONENT)) as { HostReadLine: (p: Props) => unknown };
const { createElement } = (await import(REACT)) as { createElement(c: (p: Props) => unknown, p: Props): unknown };
const { renderToStaticMarkup } = (await import(REACT_DOM_SERVER)) as { renderToStaticMarkup(el: unknown): string };
const html = (read: HostReadView | undefined) => renderToStaticMarkup(createElement(HostReadLine, { read }));

describe('HostReadLine', () => {
  it('says how the host is read, and why tunnels', () => {
    expect(html({ mode: 'collector', reason: null, clockSkewS: null })).toContain('read by one command a poll');
    const t = html({ mode: 'tunnels', reason: 'FLEET_COLLECTOR_UNSUPPORTED: curl is not installed on the host', clockSkewS: null });
    expect(t).toContain('read through tunnels: FLEET_COLLECTOR_UNSUPPORTED: curl is not installed on the host');
    expect(t).toContain('data-mode="tunnels"');
    expect(html({ mode: 'probing', reason: null, clockSkewS: null })).toContain('until the host is probed');
    expect(html(undefined)).toBe('');
  });

  it('names a clock minutes off and which way', () => {
    expect(html({ mode: 'collector', reason: null, clockSkewS: 300 })).toContain('host clock 5 min ahead of the console');
    expect(html({ mode: 'collector', reason: null, clockSkewS: -90 })).toContain('host clock 90 s behind the console');
  });
});
