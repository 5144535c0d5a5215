// axe-core's serious and critical violations on a page (the page must be opened
// with bypassCSP so the script can be injected; the console's own CSP is unchanged).
// The same check as test/e2e/a11y.e2e.test.ts, for tests that fill a view first.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';

const AXE = readFileSync(join(process.cwd(), 'node_modules', 'axe-core', 'axe.min.js'), 'utf8');

export interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: { target: string[] }[];
}

/** `within`: a CSS selector to check only that part of the page (a panel under test); default the whole document. */
export async function seriousViolations(page: Page, within?: string): Promise<AxeViolation[]> {
  await page.addScriptTag({ content: AXE });
  const result = await page.evaluate(async (selector) => {
    const axe = (globalThis as unknown as { axe: { run(ctx: unknown, opts: unknown): Promise<{ violations: AxeViolation[] }> } }).axe;
    return axe.run(selector ?? (globalThis as unknown as { document: unknown }).document, { resultTypes: ['violations'] });
  }, within ?? null);
  return result.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
}

/** One line per violation: theme, view, impact, rule and where. */
export function describeViolations(where: string, found: readonly AxeViolation[]): string[] {
  return found.map((v) => `${where}: ${v.impact} ${v.id} (${v.help}) at ${v.nodes.slice(0, 3).map((n) => n.target.join(' ')).join(' | ')}`);
}
