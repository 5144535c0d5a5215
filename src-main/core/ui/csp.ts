/**
 * The renderer's Content-Security-Policy, sent by both hosts (the Electron
 * app:// protocol and the web bridge) and repeated in index.html's meta tag.
 * No inline script or style, no remote content, no framing. The one hash in
 * style-src is the evidence report's stylesheet (REPORT_STYLE_CSP_SOURCE), so
 * the report preview — a sandboxed srcdoc frame that inherits this policy — is
 * styled; test/unit/core/ui/static-path.test.ts keeps it equal to the report's.
 */
export const REPORT_PREVIEW_STYLE_SOURCE = "'sha256-983Lf/1+1ynNeF0ZMnCcwvAINIpKIKKeGoANly/FFCs='";

export const RENDERER_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  `style-src 'self' ${REPORT_PREVIEW_STYLE_SOURCE}`,
  "img-src 'self' data:",
  "connect-src 'self'",
  "font-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

/** Headers every renderer response carries, whichever host serves it. */
export const RENDERER_SECURITY_HEADERS: Record<string, string> = {
  'content-security-policy': RENDERER_CSP,
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'cross-origin-opener-policy': 'same-origin',
  'cross-origin-resource-policy': 'same-origin',
  'x-frame-options': 'DENY',
};
