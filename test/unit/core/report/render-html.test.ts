import { describe, expect, it } from 'vitest';
import { EvidenceSchema, type Evidence } from '../../../../src-preload/contract/index.js';
import { renderHtml } from '../../../../src-main/core/report/render-html.js';
import { renderMarkdown } from '../../../../src-main/core/report/render-markdown.js';
import { SAMPLE_HEAD_HASH, sampleEvidence } from '../../../fixtures/report/evidence-sample.js';

const SHA = 'c0ffee'.repeat(10) + 'abcd';
const render = (e: Evidence = sampleEvidence()) => renderHtml(e, { evidenceSha256: SHA });

const SECTION_IDS = ['summary', 'gates', 'inventory', 'security', 'health', 'hoststate', 'charts', 'benchmarks', 'cost', 'lifecycle', 'alerts', 'logs', 'audit', 'notes'];

function section(html: string, id: string): string {
  const start = html.indexOf(`<section id="${id}"`);
  expect(start, `section ${id}`).toBeGreaterThanOrEqual(0);
  return html.slice(start, html.indexOf('</section>', start));
}

/** Visible text: tags dropped, the entities we write decoded. */
function textOf(html: string): string {
  return html
    .replace(/<br>/g, '\n')
    .replace(/<[^>]+>/g, '')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&amp;/g, '&');
}

const HOSTILE = 'Qwen|evil\n<script>alert(1)</script><img src=x onerror=alert(1)><a href="javascript:alert(1)">x</a> "quoted" \'single\' &amp; \u202Eexe.txt\u0007';

function hostile(): Evidence {
  const e = sampleEvidence();
  e.title = '</title><script>alert(1)</script>';
  e.inventory![0]!.services[0]!.model = HOSTILE;
  e.gates![0]!.note = HOSTILE;
  e.notes.push(HOSTILE);
  e.alerts![0]!.message = HOSTILE;
  e.security![0]!.checks[0]!.evidence = HOSTILE;
  e.charts[0]!.series[0]!.name = HOSTILE;
  e.charts[0]!.title = HOSTILE;
  return EvidenceSchema.parse(e);
}

describe('renderHtml', () => {
  it('is one self-contained document: charset, CSP, inline style, no script, no external URL', () => {
    const html = render();
    expect(html.startsWith('<!doctype html>\n<html lang="en">')).toBe(true);
    expect(html).toContain('<meta charset="utf-8">');
    expect(html).toContain(`<meta http-equiv="Content-Security-Policy" content="default-src 'none'; img-src data:; style-src 'unsafe-inline'">`);
    expect(html).toMatch(/<style>[\s\S]+<\/style>/);
    expect(html).not.toMatch(/<script/i);
    expect(html).not.toContain('http://');
    expect(html).not.toContain('https://');
    expect(html).not.toContain('src="/');
    expect(html).not.toMatch(/\bhref=/);
    expect(html).not.toMatch(/<link\b/);
    expect(html).not.toMatch(/url\(|@import/);
    expect(html).not.toMatch(/\son[a-z]+=/i);
    for (const src of html.match(/\ssrc="[^"]*"/g) ?? []) expect(src.startsWith(' src="data:image/svg+xml;base64,')).toBe(true);
    expect(html.trimEnd().endsWith('</html>')).toBe(true);
  });

  it('lays out for A4 print: page size, page breaks before major sections, rows kept whole', () => {
    const html = render();
    expect(html).toContain('@page { size: A4;');
    expect(html).toMatch(/@media print \{[\s\S]*section\.page-break \{ break-before: page;/);
    expect(html).toMatch(/tr, figure, img \{ break-inside: avoid;/);
    expect(html).toContain('thead { display: table-header-group; }');
    for (const id of ['inventory', 'charts', 'benchmarks', 'lifecycle']) expect(html).toContain(`<section id="${id}" class="page-break">`);
    expect(html).toContain('<section id="summary">');
    expect(html).toContain('<section id="gates">');
  });

  it('has the same sections in the same order as the Markdown', () => {
    const e = sampleEvidence();
    const html = render(e);
    const ids = [...html.matchAll(/<section id="([a-z]+)"/g)].map((m) => m[1]);
    expect(ids).toEqual(SECTION_IDS);
    const h2 = [...html.matchAll(/<h2>([^<]*)<\/h2>/g)].map((m) => textOf(m[1]!));
    const md = renderMarkdown(e, { evidenceSha256: SHA });
    expect(h2).toEqual(md.split('\n').filter((l) => l.startsWith('## ')).map((l) => l.slice(3)));
  });

  it('shows verdicts as badges with their word, and unverified never as pass', () => {
    const e = sampleEvidence();
    const gates = section(render(e), 'gates');
    const rows = gates.split('<tr>').slice(2);
    expect(rows).toHaveLength(e.gates!.length);
    e.gates!.forEach((g, i) => {
      const row = rows[i]!;
      expect(row).toContain(`<code>${g.id}</code>`);
      const word = { pass: 'PASS', fail: 'FAIL', pending: 'PENDING', unverified: 'UNVERIFIED' }[g.status];
      expect(row).toContain(`<span class="badge badge-${g.status}"><span aria-hidden="true">`);
      expect(row).toContain(`</span> ${word}</span>`);
      if (g.status !== 'pass') {
        expect(row).not.toContain('badge-pass');
        expect(row).not.toContain('PASS');
      }
    });
    const summary = textOf(section(render(e), 'summary'));
    expect(summary).toContain('✓ PASS 4 · ✗ FAIL 3 · … PENDING 1 · ? UNVERIFIED 2');
    const security = section(render(e), 'security');
    expect(security.match(/badge-unverified/g)).toHaveLength(2);
    expect(security.match(/badge-fail/g)).toHaveLength(1);
  });

  it('carries the facts of every section', () => {
    const html = render();
    const t = textOf(html);
    for (const fact of [
      'L20 proof of concept — readiness evidence',
      'Demo fleet: this evidence comes from the simulated demo fleet',
      '2025-06-02T08:00:00Z to 2025-06-02T10:00:00Z (2 h 0 min)',
      'NVIDIA L20',
      '46,068 MiB',
      '2.641736 USD/h',
      'Qwen3.6-27B-FP8 (32,768)',
      'gemma-3-12b-it-Q4_K_M.gguf',
      'sshd -T: passwordauthentication yes',
      '96.7 %',
      '4 min 10 s',
      'stability loop, c=4',
      '0.226 s / 0.605 s',
      'completion tokens ÷ the span that had traffic (2.0 min from the first request sent to the last one finished)',
      'price per hour ÷ (3600 × output tok/s over the span that had traffic, idle gaps between requests included) × 10⁶',
      '≈ 5.11 USD (estimate)',
      'unavailable (estimate): no price configured',
      "price per hour × 1.93 h observed of the window's 2.00 h (96.7 %)",
      '1 h 56 min of 2 h 0 min (96.7 %)',
      'approved by Dana Ortiz (dana, electron)\nat 2025-06-02T08:39:20Z',
      '2 / 0',
      'no telemetry from homelab-3090 for 36 s',
      'telemetry resumed after 3 min 40 s',
      'seq 1204 to 1388',
      'seq 1391',
      SAMPLE_HEAD_HASH,
      'homelab-3090 has no price configured: its cost figures are unavailable.',
      'Evidence id ev_01JX4Q8Z7K2M5N9P3R6T8V1W4Y · schema gpu-console.evidence/4 · evidence SHA-256 ' + SHA,
      'The digests of every file are in manifest.json.',
    ]) {
      expect(t, fact).toContain(fact);
    }
  });

  it('embeds every chart as a data: SVG image with a descriptive alt text', () => {
    const e = sampleEvidence();
    const charts = section(render(e), 'charts');
    const imgs = [...charts.matchAll(/<img alt="([^"]+)" width="720" height="280" src="data:image\/svg\+xml;base64,([A-Za-z0-9+/=]+)">/g)];
    expect(imgs).toHaveLength(e.charts.length);
    imgs.forEach((m, i) => {
      const chart = e.charts[i]!;
      expect(textOf(m[1]!)).toContain(chart.title);
      const svg = Buffer.from(m[2]!, 'base64').toString('utf8');
      expect(svg.startsWith('<svg')).toBe(true);
      for (const s of chart.series) expect(svg).toContain(s.name);
    });
    expect(textOf(charts)).toContain('Benchmark output tok/s by level — l20-poc (tok/s)');
  });

  it('escapes every hostile string: no tag, attribute, entity or bidi override gets through', () => {
    const html = render(hostile());
    expect(html).not.toMatch(/<script/i);
    expect(html).not.toMatch(/<img src=x/);
    expect(html).not.toMatch(/<a\b/);
    // Real tags hold only our own attributes, each with a quoted value.
    const tags = [...html.matchAll(/<[a-z][^>]*>/gi)].map((m) => m[0]);
    for (const tag of tags) expect(tag).toMatch(/^<[a-z0-9]+(\s[a-z-]+="[^"<>]*")*>$/i);
    const attrs = new Set(tags.flatMap((tag) => [...tag.matchAll(/\s([a-z-]+)="/gi)].map((a) => a[1]!.toLowerCase())));
    expect([...attrs].sort()).toEqual(['alt', 'aria-hidden', 'charset', 'class', 'content', 'height', 'http-equiv', 'id', 'lang', 'name', 'scope', 'src', 'width']);
    expect(html).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
    expect(html).toContain('&lt;/title&gt;&lt;script&gt;');
    expect(html).toContain('&quot;quoted&quot; &#39;single&#39; &amp;amp;');
    expect(html).not.toContain('\u202E');
    expect(html).not.toContain('\u0007');
    // The newline in the model name is a line break inside its cell, not a new row.
    const inv = section(html, 'inventory');
    expect(inv).toContain('<td>Qwen|evil<br>&lt;script&gt;');
    // The alt text stays one attribute.
    const alts = [...html.matchAll(/<img alt="([^"]*)"/g)];
    expect(alts).toHaveLength(3);
    expect(alts[0]![1]).toContain('&lt;script&gt;');
    // Chart images still decode to SVG with the name escaped inside.
    const svg = Buffer.from(html.match(/base64,([A-Za-z0-9+/=]+)/)![1]!, 'base64').toString('utf8');
    expect(svg).not.toContain('<script');
    expect(svg).toContain('&lt;script&gt;');
  });

  it('renders the same evidence to the same bytes', () => {
    expect(render()).toBe(render());
  });

  it('leaves out sections that were not chosen', () => {
    const e = sampleEvidence();
    e.inventory = null;
    e.benchmarks = null;
    e.trafficEvaluation = null;
    e.charts = [];
    const html = render(EvidenceSchema.parse(e));
    const ids = [...html.matchAll(/<section id="([a-z]+)"/g)].map((m) => m[1]);
    expect(ids).toEqual(SECTION_IDS.filter((s) => !['inventory', 'benchmarks', 'charts'].includes(s)));
    expect(html).not.toContain('<img');
    expect(textOf(html)).toContain('Sections not included: inventory, benchmarks.');
  });
});
