import { describe, expect, it } from 'vitest';
import { EvidenceSchema, type Evidence } from '../../../../src-preload/contract/index.js';
import { renderMarkdown } from '../../../../src-main/core/report/render-markdown.js';
import { SAMPLE_HEAD_HASH, sampleEvidence } from '../../../fixtures/report/evidence-sample.js';

const SHA = 'c0ffee'.repeat(10) + 'abcd';
const render = (e: Evidence = sampleEvidence()) => renderMarkdown(e, { evidenceSha256: SHA });

const SECTIONS = [
  'Summary',
  'Gates',
  'Inventory',
  'Security checks',
  'Health',
  'Host health at export',
  'Charts',
  'Benchmarks and evaluation',
  'Cost (estimates)',
  'Lifecycle actions',
  'Alerts',
  'Log lines around lifecycle actions',
  'Audit coverage',
  'Notes',
];

/** The text of one `## title` section, up to the next `## `. */
function section(md: string, title: string): string {
  const start = md.indexOf(`\n## ${title}\n`);
  expect(start, `section ${title}`).toBeGreaterThanOrEqual(0);
  const next = md.indexOf('\n## ', start + 4);
  return md.slice(start, next === -1 ? undefined : next);
}

/** Table rows (lines starting with `|`) and their count of cell separators (unescaped pipes). */
const pipes = (line: string) => line.replace(/\\\|/g, '').split('|').length - 1;

function tableRows(md: string): string[][] {
  const tables: string[][] = [];
  let current: string[] | null = null;
  for (const line of md.split('\n')) {
    if (line.startsWith('|')) (current ??= []).push(line);
    else if (current) {
      tables.push(current);
      current = null;
    }
  }
  if (current) tables.push(current);
  return tables;
}

const HOSTILE = 'Qwen|evil\n# Owned <script>alert(1)</script> <img src=x onerror=alert(1)> [click](javascript:alert(1)) `tick` **bold** _em_ &lt; $x$ ~~del~~ \u202Eexe.txt';

function hostile(): Evidence {
  const e = sampleEvidence();
  e.title = '<script>alert(1)</script> | # title';
  e.inventory![0]!.services[0]!.model = HOSTILE;
  e.benchmarks![0]!.model = HOSTILE;
  e.security![0]!.checks[0]!.evidence = 'LISTEN | 0.0.0.0:8000\n# not a heading\n- not a list';
  e.gates![0]!.note = HOSTILE;
  e.notes.push(HOSTILE, '1. not a list', '    not code', '---');
  e.alerts![0]!.message = HOSTILE;
  e.lifecycle!.actions[0]!.approvedBy = 'Eve **(admin)** | <b>x</b>';
  return EvidenceSchema.parse(e);
}

describe('renderMarkdown', () => {
  it('puts the sections in the fixed order, the gates first after the summary', () => {
    const md = render();
    const headings = md.split('\n').filter((l) => l.startsWith('## ')).map((l) => l.slice(3));
    expect(headings).toEqual(SECTIONS);
    expect(md.startsWith('# L20 proof of concept — readiness evidence\n')).toBe(true);
  });

  it('summarises the gate counts with their words', () => {
    const s = section(render(), 'Summary');
    expect(s).toContain('✅ PASS 4');
    expect(s).toContain('❌ **FAIL** 3');
    expect(s).toContain('⏳ PENDING 1');
    expect(s).toContain('⚠️ **UNVERIFIED** 2');
    expect(s).toContain('Gates (10)');
    expect(s).toContain('Security checks: 10 in all — 7 pass, 1 fail, 2 unverified.');
    expect(s).toContain('2 notes limit this report');
  });

  it('shows every gate with its status word, and unverified never as pass', () => {
    const e = sampleEvidence();
    const s = section(render(e), 'Gates');
    for (const g of e.gates!) {
      const row = s.split('\n').find((l) => l.includes(`\`${g.id}\``));
      expect(row, g.id).toBeDefined();
      const status = row!.split('|')[1]!;
      expect(status).toContain({ pass: 'PASS', fail: 'FAIL', pending: 'PENDING', unverified: 'UNVERIFIED' }[g.status]);
      if (g.status !== 'pass') expect(status).not.toContain('PASS');
      expect(row).toContain(g.kind);
    }
    expect(s).toContain('Checked against order PO-2025-0142.');
    expect(s).toContain('Dana Ortiz (dana, electron)<br>2025-06-02T08:20:00Z');
  });

  it('carries the facts of every section', () => {
    const md = render();
    const inv = section(md, 'Inventory');
    expect(inv).toContain('### l20-poc');
    expect(inv).toContain('### homelab-3090');
    expect(inv).toContain('| 0 | NVIDIA L20 | 46,068 MiB | 570.133.20 |');
    expect(inv).toContain('2.641736 USD/h');
    expect(inv).toContain('Qwen3.6-27B-FP8 (32,768)');
    expect(inv).toContain('llama-server');
    expect(inv).toContain('apiKey = \\[redacted\\]');

    const sec = section(md, 'Security checks');
    expect(sec).toContain('❌ **FAIL** | SSH password login disabled');
    expect(sec).toContain('ps: permission denied (hidepid=2)<br>exit status 1');
    expect(sec).toContain('| not measured |');

    const health = section(md, 'Health');
    expect(health).toContain('| homelab-3090 | 96.7 % | 1 | 1 |');
    expect(health).toContain('2025-06-02T09:12:00Z | 2025-06-02T09:16:10Z | 4 min 10 s');

    const charts = section(md, 'Charts');
    expect(charts).toContain('Output tokens per second');
    expect(charts).toContain('GPU memory used');
    expect(charts).toContain('2 missing');

    const bench = section(md, 'Benchmarks and evaluation');
    expect(bench).toContain('### poc-baseline (baseline)');
    for (const row of ['| c=1 | 5<br>', '| c=2 | 8<br>', '| c=4 | 12<br>', '| stability loop, c=4 | 40<br>']) expect(bench).toContain(row);
    expect(bench).toContain('0.136 s / 0.136 s');
    expect(bench).toContain('| 71.51 |');
    expect(bench).toContain('VRAM 38,751 MiB');
    expect(bench).toContain('### Proxy traffic evaluation');
    // Every evaluation figure is shown with its formula.
    for (const f of [...sampleEvidence().benchmarks![0]!.evaluation.figures, ...sampleEvidence().trafficEvaluation!.figures]) {
      expect(bench).toContain(f.label);
    }
    expect(bench).toContain('completion tokens ÷ the span that had traffic (2.0 min from the first request sent to the last one finished), not the whole window');
    expect(bench).toContain('price per hour ÷ (3600 × output tok/s over busy time) × 10⁶');
    expect(bench).toContain('≈ 10.13 USD/1M tok (estimate)');
    expect(bench).toContain('unavailable: no price configured for the host');

    const cost = section(md, 'Cost (estimates)');
    expect(cost).toContain('Every cost figure here is an estimate');
    expect(cost).toContain("≈ 5.11 USD (estimate) | price per hour × 1.93 h observed of the window's 2.00 h (96.7 %)");
    expect(cost).toContain('| l20-poc | 2.641736 USD/h | 1 h 56 min of 2 h 0 min (96.7 %) | 412,380 |');
    expect(cost).toContain('unavailable (estimate): no price configured');
    expect(cost).toContain('412,380');
    // A cost figure is never shown without the word estimate.
    for (const line of cost.split('\n').filter((l) => /USD \||USD\/1M tok \|/.test(l))) expect(line).toContain('estimate');

    const life = section(md, 'Lifecycle actions');
    expect(life).toContain('approved by **Dana Ortiz (dana, electron)**<br>at 2025-06-02T08:39:20Z');
    expect(life).toContain('**sleep** l20-poc/qwen');
    expect(life).toContain('**wake** l20-poc/qwen');
    expect(life).toContain('| 2 / 0 |');
    expect(life).toContain('requests drained 2');
    expect(life).toContain('VRAM 38,751 → 1,302 MiB');

    const alerts = section(md, 'Alerts');
    expect(alerts).toContain('| 1297 | 2025-06-02T09:12:40Z | raised | critical | host\\_stale | homelab-3090 |');
    expect(alerts).toContain('| cleared |');

    const audit = section(md, 'Audit coverage');
    expect(audit).toContain('seq 1204 to 1388');
    expect(audit).toContain('seq 1391');
    expect(audit).toContain(`\`${SAMPLE_HEAD_HASH}\``);
    expect(audit).toContain('✅ PASS');

    const notes = section(md, 'Notes');
    expect(notes).toContain('- homelab-3090 lost its SSH connection');
  });

  it('ends with the footer: evidence id, schema, evidence sha256 and the manifest', () => {
    const md = render();
    const footer = md.slice(md.lastIndexOf('\n---\n'));
    expect(footer).toContain('`ev_01JX4Q8Z7K2M5N9P3R6T8V1W4Y`');
    expect(footer).toContain('`gpu-console.evidence/4`');
    expect(footer).toContain(`\`${SHA}\``);
    expect(footer).toContain('The digests of every file are in manifest.json.');
  });

  it('writes every time as ISO 8601 UTC', () => {
    const md = render();
    const stamps = md.match(/\d{4}-\d{2}-\d{2}T[0-9:.]*Z?/g) ?? [];
    expect(stamps.length).toBeGreaterThan(20);
    for (const s of stamps) expect(s).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{3})?Z$/);
    expect(md).toContain('2025-06-02T08:00:00Z to 2025-06-02T10:00:00Z');
  });

  it('leaves out sections that were not chosen and says so', () => {
    const e = sampleEvidence();
    e.cost = null;
    e.alerts = null;
    e.gates = null;
    const md = render(EvidenceSchema.parse(e));
    const headings = md.split('\n').filter((l) => l.startsWith('## ')).map((l) => l.slice(3));
    expect(headings).toEqual(SECTIONS.filter((s) => !['Gates', 'Cost (estimates)', 'Alerts'].includes(s)));
    expect(md).toContain('Gates were not part of this report.');
    expect(md).toContain('Sections not included: gates, cost, alerts.');
  });

  it('says when the audit chain did not verify, and when a section is empty', () => {
    const e = sampleEvidence();
    e.audit = { ...e.audit, chainVerified: false, chainProblem: 'row 1300: hash mismatch' };
    e.alerts = [];
    e.notes = [];
    const md = render(e);
    expect(section(md, 'Summary')).toContain('**Audit chain: NOT verified** — row 1300: hash mismatch.');
    expect(section(md, 'Audit coverage')).toContain('❌ **FAIL** — row 1300: hash mismatch');
    expect(section(md, 'Alerts')).toContain('No alerts in the window.');
    expect(section(md, 'Notes')).toContain('None.');
  });

  it('keeps hostile strings inert: tables keep their shape, no heading, list, link, HTML or code is injected', () => {
    const md = render(hostile());
    // Every row of every table has as many cell separators as its header.
    for (const table of tableRows(md)) {
      const n = pipes(table[0]!);
      for (const row of table) expect(pipes(row), row).toBe(n);
    }
    // No line starts a heading other than ours, or a list other than ours.
    const headings = md.split('\n').filter((l) => /^#{1,6}\s/.test(l));
    expect(headings.filter((h) => !h.startsWith('## ') && !h.startsWith('### ') && !h.startsWith('# '))).toEqual([]);
    expect(headings.some((h) => h.includes('Owned') || h.includes('not a heading'))).toBe(false);
    expect(md).not.toMatch(/^\s*(- not a list|1\. not a list| {4}not code|---\S)/m);
    expect(md).toContain('- 1\\. not a list');
    expect(md).toContain('- \\---');
    // No raw HTML from the strings (our own <br> only), no link, no code span, no emphasis.
    expect(md.replace(/<br>/g, '')).not.toMatch(/(?<!\\)<[a-z/]/i);
    expect(md).not.toMatch(/(?<!\\)<script/);
    expect(md).toContain('\\<script\\>alert(1)\\</script\\>');
    expect(md).not.toContain('[click](');
    expect(md).toContain('\\[click\\](javascript:alert(1))');
    expect(md).not.toContain('`tick`');
    expect(md).not.toContain('**bold**');
    expect(md).toContain('\\*\\*bold\\*\\*');
    expect(md).toContain('\\&lt;');
    expect(md).toContain('\\$x\\$');
    expect(md).toContain('Eve \\*\\*(admin)\\*\\* \\| \\<b\\>x\\</b\\>');
    // The model name's pipe and newline stay inside its cell.
    expect(md).toContain('| Qwen\\|evil<br>\\# Owned');
    // Bidi overrides cannot reorder what the reader sees.
    expect(md).not.toContain('\u202E');
    expect(md).toContain('\uFFFDexe.txt');
    expect(md.startsWith('# \\<script\\>alert(1)\\</script\\> \\| \\# title\n')).toBe(true);
  });
});
