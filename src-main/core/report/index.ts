// Evidence reports: the evidence model assembled from the store and live checks
// over SSH, its renderings (Markdown, self-contained HTML, canonical JSON, PDF
// through a PdfPrinter port), SHA-256 manifests, SSHSIG signatures and their verification.
export { ReportErrorCode } from './errors.js';
export { buildEvidence, type ReportSources, type ReportHost } from './builder.js';
export { autoGates, manualGates, gateCounts, combineChecks, MANUAL_GATES, type ManualGateDefinition } from './gates.js';
export { ReportRepository, type GateMark } from './repository.js';
export { ReportService, type ReportServiceOptions, type ExportInput } from './service.js';
export { writeExport, ensureWritableDir, sha256Hex, type ExportFiles, type WriteExportOptions } from './exporter.js';
export { runLiveChecks, configuredService, type LiveCheckDeps } from './live-checks.js';
export { redactServiceConfig } from './redact-config.js';
export { renderMarkdown } from './render-markdown.js';
export { renderHtml } from './render-html.js';
export { loadSigner, agentSigner, verifySshsig, type SshSigner, type FileSigner } from './sshsig.js';
export { allowedSignersLine, parseAllowedSigners, findAllowedSigner, type AllowedSigner } from './allowed-signers.js';
export { verifyExport } from './verify.js';
export { createConsoleReport, type ConsoleReportDeps } from './console-report.js';
export { reportChannels } from './channels.js';
export { thresholdsOf, marginOf, diskThresholdText, formatBytes } from './disk-margin.js';
