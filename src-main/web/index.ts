// The headless bridge: the same contract the Electron preload carries, over
// HTTP + SSE on loopback, for `gpu-console serve` and the e2e tests.
export { startWebBridge, TOKEN_HEADER, CALLER_HEADER, MAX_BODY_BYTES, type WebBridge, type WebBridgeOptions } from './server.js';
export { ChromiumPdfPrinter } from './pdf-printer.js';
