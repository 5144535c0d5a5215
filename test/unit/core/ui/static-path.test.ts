import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { REPORT_STYLE_CSP_SOURCE } from '../../../../src-main/core/report/render-html.js';
import { RENDERER_CSP, resolveStaticPath } from '../../../../src-main/core/ui/index.js';

const root = '/srv/renderer';

describe('resolveStaticPath', () => {
  it('maps / to index.html and plain paths inside the root', () => {
    expect(resolveStaticPath(root, '/')).toBe(join(root, 'index.html'));
    expect(resolveStaticPath(root, '/assets/index-abc.js')).toBe(join(root, 'assets/index-abc.js'));
    expect(resolveStaticPath(root, '/assets/a%20b.css?v=1')).toBe(join(root, 'assets/a b.css'));
  });

  it.each([
    '/../etc/passwd',
    '/assets/../../etc/passwd',
    '/%2e%2e/etc/passwd',
    '/assets/%2e%2e/%2e%2e/secret',
    '/..%2fetc%2fpasswd',
    '/assets%5c..%5c..%5csecret',
    '/a\\..\\..\\b',
    '/x%00.html',
    '/%E0%A4%A',
  ])('refuses %s', (path) => {
    expect(resolveStaticPath(root, path)).toBeNull();
  });
});

describe('renderer CSP', () => {
  it('allows no inline script, no remote origins and no framing', () => {
    expect(RENDERER_CSP).toContain("script-src 'self'");
    expect(RENDERER_CSP).not.toMatch(/unsafe-inline|unsafe-eval|https?:|\*/);
    expect(RENDERER_CSP).toContain("frame-ancestors 'none'");
    expect(RENDERER_CSP).toContain("object-src 'none'");
  });

  it("lists exactly the report stylesheet's hash, in the headers and in index.html alike", () => {
    expect(RENDERER_CSP).toContain(`style-src 'self' ${REPORT_STYLE_CSP_SOURCE};`);
    const html = readFileSync(join(__dirname, '../../../../src-renderer/index.html'), 'utf8');
    const meta = /http-equiv="Content-Security-Policy"\s+content="([^"]+)"/.exec(html)?.[1] ?? '';
    expect(meta).toContain(`style-src 'self' ${REPORT_STYLE_CSP_SOURCE};`);
    // Every other directive of the meta tag matches the header policy.
    const directives = (p: string) => p.split(';').map((d) => d.trim()).filter((d) => d && !d.startsWith('frame-ancestors'));
    expect(directives(meta)).toEqual(directives(RENDERER_CSP));
  });
});
