import { randomUUID } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { renderHtml } from '../../../src-main/core/report/render-html.js';
import { renderMarkdown } from '../../../src-main/core/report/render-markdown.js';
import type { Evidence, ReportRequestInput } from '../../../src-preload/contract/index.js';
import { startReportWorld, type ReportWorld } from '../../helpers/report-world.js';

// Issue #27 finding 2: the report divided the price of the whole window by the
// tokens the console saw while it ran (l20-poc ≈ 432 USD/1M tok at 6.7 %
// coverage while the host view said 79). Now both are one function over the
// time the console observed each host. Also "Bad input": reports over windows
// with no actions, no traffic, a host never connected, a price missing or
// tokens partly unknown say so in words, in Markdown, HTML and JSON.

const HOUR = 3_600_000;
const SHA = 'c'.repeat(64);
let world: ReportWorld;

beforeEach(async () => {
  world = await startReportWorld();
});
afterEach(() => world.close());

/** Each rendering of the evidence, for the checks every one of them must pass. */
function renderings(e: Evidence): Record<'md' | 'html' | 'json', string> {
  return { md: renderMarkdown(e, { evidenceSha256: SHA }), html: renderHtml(e, { evidenceSha256: SHA }), json: JSON.stringify(e) };
}

function neverFalse(text: string, what: string): void {
  expect(text, `${what}: NaN`).not.toMatch(/NaN/);
  expect(text, `${what}: Infinity`).not.toMatch(/Infinity/);
  expect(text, `${what}: $0.00`).not.toContain('$0.00');
  expect(text, `${what}: a negative duration`).not.toMatch(/-\d+(\.\d+)? ?(s|min|h)\b/);
}

const request = (window: { fromMs: number; toMs: number }, hosts: string[] = []): ReportRequestInput => ({ ...window, hosts, sections: ['cost', 'lifecycle', 'health'], live: false });

describe('a report over a window equals the host view for that window', () => {
  it('one hour of readings in a day: the report prices that hour, as cost.summary does, with the coverage stated', async () => {
    world.rates.set('h1', 72.47);
    world.advance(HOUR, 5_000);
    world.rates.delete('h1'); // then no readings: the console stopped watching
    world.advance(2 * HOUR, 60_000);
    const toMs = world.clock.now();
    const e = await world.preview(request({ fromMs: toMs - 24 * HOUR, toMs }));
    const summary = world.telemetry.costSummary({ window: '24h', endMs: toMs });
    for (const label of ['h1', 'h2', 'h3']) {
      const row = e.cost!.find((c) => c.host === label)!;
      const ui = summary.hosts.find((h) => h.host === label)!;
      const { host: _h, pricePerHourUsd: _p, perMillionOutputUsageBased, perMillionOutputReservationBased, ...window } = row;
      expect(window, label).toEqual(ui.window);
      expect(perMillionOutputUsageBased, label).toEqual(ui.perMillionOutputUsageBased);
      expect(perMillionOutputReservationBased, label).toEqual(ui.perMillionOutputReservationBased);
    }
    const h1 = e.cost!.find((c) => c.host === 'h1')!;
    // One hour of readings, counted in the 24 h range's 1-minute buckets (the last reading opens one more).
    expect(h1.observedSeconds).toBeGreaterThanOrEqual(3600);
    expect(h1.observedSeconds).toBeLessThanOrEqual(3660);
    expect(h1.coveragePct).toBeCloseTo(100 / 24, 0);
    // The field-notes figure (USD 2.641736/h at 72.47 tok/s ≈ 10.13 per 1M), not 24× it.
    expect(h1.perMillionOutputReservationBased.value).toBeCloseTo(10.13, 1);
    expect(h1.perMillionOutputUsageBased.value).toBeCloseTo(10.13, 1);
    expect(h1.observedUsd.value).toBeCloseTo(2.641736 * (h1.observedSeconds / 3600), 6);
    const md = renderings(e).md;
    expect(md).toMatch(/\| h1 \| 2\.641736 USD\/h \| 1 h [01] min of 24 h 0 min \(4\.2 %\) \| 26\d,\d{3} \|/);
  });
});

describe('bad input says so in words (Markdown, HTML, JSON)', () => {
  it('no actions, no traffic, a host never connected, a price missing', async () => {
    world.rates.set('h1', 0); // h1 read and idle: no traffic; h2 connected but unread; h3 never connected
    world.advance(10 * 60_000, 10_000);
    const toMs = world.clock.now();
    const e = await world.preview(request({ fromMs: toMs - HOUR, toMs }));
    const out = renderings(e);
    for (const [what, text] of Object.entries(out)) neverFalse(text, what);
    expect(e.lifecycle).toMatchObject({ proposed: 0, approved: 0 });
    expect(out.md).toContain('No lifecycle action was proposed in the window.');
    expect(out.html).toContain('No lifecycle action was proposed in the window.');
    const h3 = e.cost!.find((c) => c.host === 'h3')!;
    expect(h3).toMatchObject({ observedSeconds: 0, coveragePct: 0, outputTokens: null });
    expect(out.json).toContain('"outputTokens":null');
    expect(out.md).toMatch(/\| h3 \| 1\.5 USD\/h \| never observed \(0 % of 1 h 0 min\) \| — \| unknown: /);
    expect(out.html).toContain('never observed (0 % of 1 h 0 min)');
    expect(out.md).toContain('unavailable (estimate): the console holds no reading of this host in the window (never observed)');
    expect(e.notes.join(' ')).toContain('The console holds no reading of h2, h3 in the window');
    // Observed and idle: 0 tokens is a measured figure; per 1M tokens is unavailable in words, the idle time still has its price.
    const h1 = e.cost!.find((c) => c.host === 'h1')!;
    expect(h1).toMatchObject({ outputTokens: 0, observedSeconds: 600 });
    expect(h1.perMillionOutputUsageBased.unavailableReason).toBe('no output tokens in the window');
    expect(h1.observedUsd.value).toBeCloseTo((2.641736 * 600) / 3600, 9);
    expect(out.md).toContain('| h1 | Per 1M output tokens, busy time | unavailable (estimate): no output tokens in the window |');
    const h2 = e.cost!.find((c) => c.host === 'h2')!;
    expect(h2.observedUsd.unavailableReason).toBe('no price configured');
    expect(out.md).toMatch(/\| h2 \| not configured \|/);
  });

  it('tokens partly unknown: the counted ones, and how many requests gave none; never 0 for the unknown', async () => {
    world.advance(60_000);
    const at = world.clock.now() - 30_000;
    const row = (tokensOut: number | null, i: number) => ({
      id: randomUUID(), ts: at + i * 1_000, client: 'bench', class: 'interactive' as const, endpoint: '/v1/chat/completions', model: 'Gemma', upstream: 'h2/gemma',
      stream: false, status: 200, errorCode: null, queueMs: 0, ttftMs: 100, totalMs: 800, tokensIn: 20, tokensOut, bytesIn: 100, bytesOut: 200, replayed: false,
    });
    world.requests.add(row(120, 0));
    world.requests.add(row(null, 1));
    world.requests.add(row(80, 2));
    const toMs = world.clock.now();
    const e = await world.preview(request({ fromMs: toMs - HOUR, toMs }, ['h2']));
    const out = renderings(e);
    for (const [what, text] of Object.entries(out)) neverFalse(text, what);
    const h2 = e.cost![0]!;
    expect(h2.outputTokens).toBe(200);
    expect(h2.outputTokensBasis).toContain("the proxy's completion token counts");
    expect(h2.outputTokensBasis).toContain('1 of 3 requests reported no token count and are not in it');
    expect(out.md).toContain('1 of 3 requests reported no token count');
    // The UI's per-client split says the same: a group where no request gave a count is unknown, not 0.
    world.requests.add({ ...row(null, 3), client: 'silent' });
    world.requests.flush();
    const summary = world.telemetry.costSummary({ window: '1h', endMs: world.clock.now() });
    expect(summary.byClient.find((c) => c.key === 'silent')).toMatchObject({ completionTokens: null, requestsWithoutTokens: 1 });
    expect(summary.byClient.find((c) => c.key === 'bench')).toMatchObject({ completionTokens: 200, requestsWithoutTokens: 1 });
  });

  it('a window that starts in the future: no length, no negative duration, said in words', async () => {
    const now = world.clock.now();
    const e = await world.preview(request({ fromMs: now + HOUR, toMs: now + 2 * HOUR }));
    const out = renderings(e);
    for (const [what, text] of Object.entries(out)) neverFalse(text, what);
    expect(e.notes.join(' ')).toContain('The window starts in the future');
    expect(e.cost!.every((c) => c.windowSeconds === 0 && c.coveragePct === null)).toBe(true);
    expect(out.md).toContain('the window has not started');
  });
});
