import { createHash } from 'node:crypto';
import type { Evidence, GateStatus } from '../../../src-preload/contract/index.js';
import { chartSvg } from './charts-svg.js';
import { buildReportDocument, cleanText, STATUS_WORD, type Block, type DocSection, type Inline } from './report-document.js';

// The evidence as ONE self-contained HTML file: inline CSS, charts as data: SVG
// images, no script, no external URL of any kind, and a CSP that forbids
// loading anything else, so it opens offline and shows the same thing
// everywhere. Laid out for A4 printing (the PDF is this file printed).
// Every string from the evidence is HTML-escaped here and nowhere else.

const CSP = "default-src 'none'; img-src data:; style-src 'unsafe-inline'";

const ENTITIES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** Untrusted text as inert HTML (also safe inside a quoted attribute). */
export function escapeHtml(s: string): string {
  return cleanText(s).replace(/[&<>"']/g, (c) => ENTITIES[c]!);
}

/** Text with its line breaks kept; an ISO timestamp never breaks at its hyphens. */
const text = (s: string) =>
  escapeHtml(s)
    .replace(/\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d{3})?Z/g, '<span class="nowrap">$&</span>')
    .replace(/\n/g, '<br>');

// The word carries the verdict; colour and the symbol only help the eye.
const BADGE_SYMBOL: Record<GateStatus, string> = { pass: '✓', fail: '✗', unverified: '?', pending: '…' };

function badge(status: GateStatus): string {
  return `<span class="badge badge-${status}"><span aria-hidden="true">${BADGE_SYMBOL[status]}</span> ${STATUS_WORD[status]}</span>`;
}

function inline(parts: readonly Inline[]): string {
  return parts
    .map((part) => {
      if (typeof part === 'string') return text(part);
      if (part.t === 'badge') return badge(part.status);
      if (part.t === 'strong') return `<strong>${text(part.text)}</strong>`;
      return `<code>${text(part.text)}</code>`;
    })
    .join('');
}

function svgDataUrl(svg: string): string {
  return `data:image/svg+xml;base64,${Buffer.from(svg, 'utf8').toString('base64')}`;
}

function block(b: Block): string {
  switch (b.kind) {
    case 'heading':
      return `<h3>${inline(b.text)}</h3>`;
    case 'p':
      return `<p>${inline(b.content)}</p>`;
    case 'list':
      return `<ul>${b.items.map((i) => `<li>${inline(i)}</li>`).join('')}</ul>`;
    case 'table': {
      const cls = (align: 'right' | undefined) => (align === 'right' ? ' class="num"' : '');
      const head = b.columns.map((c) => `<th scope="col"${cls(c.align)}>${text(c.label)}</th>`).join('');
      const rows = b.rows.map((r) => `<tr>${b.columns.map((c, i) => `<td${cls(c.align)}>${inline(r[i] ?? [])}</td>`).join('')}</tr>`).join('\n');
      return `<table><thead><tr>${head}</tr></thead><tbody>\n${rows}\n</tbody></table>`;
    }
    case 'chart': {
      const alt = escapeHtml(b.alt.replace(/\n/g, ' '));
      return `<figure><img alt="${alt}" width="720" height="280" src="${svgDataUrl(chartSvg(b.chart, { width: 720, height: 280 }))}"><figcaption>${text(b.caption)}</figcaption></figure>`;
    }
  }
}

function section(s: DocSection): string {
  const cls = s.pageBreak ? ' class="page-break"' : '';
  return `<section id="${s.id}"${cls}>\n<h2>${text(s.title)}</h2>\n${s.blocks.map(block).join('\n')}\n</section>`;
}

const STYLE = `
@page { size: A4; margin: 15mm 13mm 16mm; }
* { box-sizing: border-box; }
html { -webkit-print-color-adjust: exact; print-color-adjust: exact; color-scheme: light; }
body { margin: 0; background: #fff; color: #1c2128; font: 14px/1.5 "Helvetica Neue", Helvetica, Arial, "Liberation Sans", "DejaVu Sans", sans-serif; }
main { max-width: 1080px; margin: 0 auto; padding: 28px 36px 40px; }
.kicker { margin: 0; font-size: 12px; letter-spacing: .08em; text-transform: uppercase; color: #5b6470; }
h1 { margin: 2px 0 10px; font-size: 26px; line-height: 1.25; }
h2 { margin: 34px 0 10px; padding-bottom: 4px; border-bottom: 2px solid #1c2128; font-size: 19px; break-after: avoid; page-break-after: avoid; }
h3 { margin: 20px 0 6px; font-size: 15px; break-after: avoid; page-break-after: avoid; }
p { margin: 6px 0 10px; }
ul { margin: 6px 0 12px; padding-left: 22px; }
ul.meta { list-style: none; padding: 0; margin: 0 0 6px; display: grid; grid-template-columns: repeat(auto-fit, minmax(300px, 1fr)); gap: 2px 24px; }
.demo { margin: 8px 0 0; padding: 6px 10px; border-left: 4px solid #b45309; background: #fff7ed; }
table { width: 100%; border-collapse: collapse; margin: 8px 0 14px; font-size: 12.5px; line-height: 1.4; }
th, td { padding: 4px 7px; border: 1px solid #cfd5dc; text-align: left; vertical-align: top; overflow-wrap: break-word; }
th { background: #eef1f5; font-weight: 600; }
.num { text-align: right; font-variant-numeric: tabular-nums; }
.nowrap { white-space: nowrap; }
thead { display: table-header-group; }
tr, figure, img { break-inside: avoid; page-break-inside: avoid; }
tbody tr:nth-child(even) td { background: #fafbfc; }
code { font-family: "DejaVu Sans Mono", Menlo, Consolas, monospace; font-size: .9em; padding: 0 3px; border-radius: 3px; background: #f1f3f6; overflow-wrap: break-word; }
.badge { display: inline-block; padding: 0 7px; border: 1px solid; border-radius: 9px; font-size: 11px; font-weight: 700; line-height: 18px; letter-spacing: .03em; white-space: nowrap; }
.badge-pass { color: #14532d; background: #dcfce7; border-color: #6fcf97; }
.badge-fail { color: #7f1d1d; background: #fee2e2; border-color: #f08a8a; }
.badge-unverified { color: #713f12; background: #fef3c7; border-color: #d9a514; border-style: dashed; }
.badge-pending { color: #334155; background: #eef2f6; border-color: #94a3b8; border-style: dotted; }
figure { margin: 10px 0 18px; }
figure img { display: block; width: 100%; max-width: 720px; height: auto; border: 1px solid #e3e7ec; }
figcaption { margin-top: 4px; font-size: 12px; color: #4b5563; }
footer { margin-top: 36px; padding-top: 8px; border-top: 1px solid #cfd5dc; font-size: 11.5px; color: #4b5563; }
footer p { margin: 2px 0; }
@media screen and (max-width: 820px) {
  main { padding: 16px 14px 24px; }
  table { font-size: 11.5px; }
  th, td { padding: 3px 5px; }
  .nowrap { white-space: normal; }
}
@media print {
  body { font-size: 9.5pt; }
  main { max-width: none; padding: 0; }
  h1 { font-size: 18pt; }
  h2 { font-size: 13.5pt; margin-top: 22px; }
  h3 { font-size: 11pt; margin-top: 14px; }
  table { font-size: 8pt; margin: 6px 0 10px; }
  th, td { padding: 3px 5px; }
  .badge { font-size: 7.5pt; line-height: 14px; padding: 0 5px; }
  figure { margin: 6px 0 10px; }
  figure img { width: 82%; }
  section.page-break { break-before: page; page-break-before: always; }
  section.page-break > h2 { margin-top: 0; }
  tbody tr:nth-child(even) td { background: none; }
}
`;

/**
 * CSP source of the report's one <style> element. The console's own CSP lists
 * it (core/ui/csp.ts, index.html) so the live preview — a sandboxed srcdoc
 * frame, which inherits the page's CSP — is styled without 'unsafe-inline'.
 * A unit test keeps the three in step.
 */
export const REPORT_STYLE_CSP_SOURCE = `'sha256-${createHash('sha256').update(STYLE, 'utf8').digest('base64')}'`;

export function renderHtml(e: Evidence, opts: { evidenceSha256: string }): string {
  const doc = buildReportDocument(e, opts);
  const header = [
    '<header>',
    '<p class="kicker">GPU Console · evidence report</p>',
    `<h1>${text(doc.title)}</h1>`,
    `<ul class="meta">${doc.header.map((l) => `<li>${inline(l)}</li>`).join('')}</ul>`,
    doc.banner ? `<p class="demo">${inline(doc.banner)}</p>` : '',
    '</header>',
  ].join('\n');
  return [
    '<!doctype html>',
    '<html lang="en">',
    '<head>',
    '<meta charset="utf-8">',
    `<meta http-equiv="Content-Security-Policy" content="${CSP}">`,
    '<meta name="referrer" content="no-referrer">',
    '<meta name="viewport" content="width=device-width, initial-scale=1">',
    `<title>${text(doc.title)}</title>`,
    `<style>${STYLE}</style>`,
    '</head>',
    '<body>',
    '<main>',
    header,
    ...doc.sections.map(section),
    `<footer>${doc.footer.map((l) => `<p>${inline(l)}</p>`).join('')}</footer>`,
    '</main>',
    '</body>',
    '</html>',
    '',
  ].join('\n');
}
