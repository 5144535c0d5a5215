// What both renderer hosts (the Electron shell and the web bridge) share:
// the CSP and security headers, and safe mapping of URL paths onto the built
// renderer folder.
export { RENDERER_CSP, RENDERER_SECURITY_HEADERS } from './csp.js';
export { resolveStaticPath, contentTypeFor } from './static-path.js';
