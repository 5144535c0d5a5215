import type { Evidence, GateStatus } from '../../../src-preload/contract/index.js';
import { buildReportDocument, cleanText, type Block, type Inline } from './report-document.js';

// The evidence as GitHub-flavoured Markdown. Every untrusted string is escaped
// so it reads as the text it is: it cannot end a table cell, start a heading
// or list, open a link, emphasis, code, math or an HTML tag. Line breaks
// inside a string become <br> (the one piece of inline HTML GFM tables need).

// Backslash-escaped wherever they occur: everything that can open inline markup
// in GFM (emphasis, code, links, images, autolinks, HTML, entities,
// strikethrough, math, table pipes).
const INLINE_SPECIALS = /[\\`*_[\]<>&|~$#]/g;

function escapeLine(line: string, atLineStart: boolean): string {
  let out = line.replace(INLINE_SPECIALS, (c) => `\\${c}`);
  // Block syntax only matters where a line starts (paragraphs and list items;
  // table cells are inline-only): indentation (code block), bullets, ordered
  // list numbers, thematic breaks.
  if (atLineStart) out = out.replace(/^\s+/, '').replace(/^([-+=])(?=\s|$|[-+=])/, '\\$1').replace(/^(\d{1,9})([.)])(?=\s|$)/, '$1\\$2');
  return out;
}

/** Untrusted text as inert Markdown; newlines become <br>. `atLineStart`: the text begins a Markdown line. */
export function mdText(s: string, atLineStart = true): string {
  return cleanText(s)
    .split('\n')
    .map((line, i) => escapeLine(line, atLineStart && i === 0))
    .join('<br>');
}

const BADGE: Record<GateStatus, string> = {
  pass: '✅ PASS',
  fail: '❌ **FAIL**',
  unverified: '⚠️ **UNVERIFIED**',
  pending: '⏳ PENDING',
};

function inline(parts: readonly Inline[], atLineStart = true): string {
  let out = '';
  for (const part of parts) {
    const atStart = atLineStart && out === '';
    if (typeof part === 'string') out += part === '\n' ? '<br>' : mdText(part, atStart);
    else if (part.t === 'badge') out += BADGE[part.status];
    else if (part.t === 'strong') {
      const text = mdText(part.text.trim(), false);
      out += text ? `**${text}**` : '';
    } else {
      const text = cleanText(part.text);
      // A code span cannot escape anything inside it; text that could end it
      // (a backtick), a table cell (a pipe) or the line falls back to escaped text.
      out += text && !/[`|\n\uFFFD]/.test(text) && text.trim() === text ? `\`${text}\`` : mdText(text, atStart);
    }
  }
  return out;
}

function cell(parts: readonly Inline[]): string {
  const s = inline(parts, false);
  return s === '' ? ' ' : s;
}

function block(b: Block): string {
  switch (b.kind) {
    case 'heading':
      return `### ${inline(b.text)}`;
    case 'p':
      return inline(b.content);
    case 'list':
      return b.items.map((item) => `- ${inline(item)}`).join('\n');
    case 'table': {
      const head = `| ${b.columns.map((c) => mdText(c.label, false)).join(' | ')} |`;
      const rule = `|${b.columns.map((c) => (c.align === 'right' ? '---:' : '---')).join('|')}|`;
      const rows = b.rows.map((r) => `| ${b.columns.map((_, i) => cell(r[i] ?? [])).join(' | ')} |`);
      return [head, rule, ...rows].join('\n');
    }
    case 'chart':
      return `**Chart: ${mdText(b.caption, false)}.** ${mdText(b.alt, false)} (The image is in the HTML and PDF report.)`;
  }
}

export function renderMarkdown(e: Evidence, opts: { evidenceSha256: string }): string {
  const doc = buildReportDocument(e, opts);
  const parts: string[] = [`# ${mdText(doc.title)}`, doc.header.map((line) => `- ${inline(line)}`).join('\n')];
  if (doc.banner) parts.push(`> ${inline(doc.banner)}`);
  for (const s of doc.sections) {
    parts.push(`## ${mdText(s.title)}`);
    for (const b of s.blocks) parts.push(block(b));
  }
  parts.push('---', ...doc.footer.map((line) => inline(line)));
  return parts.join('\n\n') + '\n';
}
