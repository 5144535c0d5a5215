// The export panel's rules: which formats, whether to sign and with which key,
// and where to write. The passphrase lives only in this draft (component
// state) for the one call it is sent with, then the draft drops it.
import type { ChannelInput, ReportFormat, ReportRequestInput } from '../../../../src-preload/contract/index.js';

export const EXPORT_FORMATS: ReadonlyArray<{ id: ReportFormat; label: string }> = [
  { id: 'md', label: 'Markdown (report.md)' },
  { id: 'html', label: 'HTML (report.html)' },
  { id: 'json', label: 'JSON (the evidence)' },
  { id: 'pdf', label: 'PDF (report.pdf)' },
];

export interface ExportDraft {
  formats: ReportFormat[];
  sign: boolean;
  /** Where the signing key is: a file on the console's machine, or the console's ssh-agent. */
  signWith: 'file' | 'agent';
  keyFile: string;
  /** Agent key: `SHA256:` fingerprint or a comment word; empty = the agent's first key. */
  agentKey: string;
  /** For an encrypted key; sent once, never stored. */
  passphrase: string;
  /** Parent folder; empty = the console's default (`<data dir>/reports`). */
  outDir: string;
}

export const DEFAULT_EXPORT: ExportDraft = { formats: ['md', 'html', 'json'], sign: false, signWith: 'file', keyFile: '', agentKey: '', passphrase: '', outDir: '' };

export type ExportInput = ChannelInput<'reports.export'>;
export type ExportCheck = { ok: true; input: ExportInput } | { ok: false; problems: string[] };

export function exportInput(request: ReportRequestInput, d: ExportDraft): ExportCheck {
  const problems: string[] = [];
  const formats = EXPORT_FORMATS.map((f) => f.id).filter((f) => d.formats.includes(f));
  if (formats.length === 0) problems.push('Formats: choose at least one (evidence.json and manifest.json are always written).');
  const keyFile = d.keyFile.trim();
  if (d.sign && d.signWith === 'file' && keyFile === '') problems.push('Signing key: enter the path of the private key file, or turn signing off.');
  if (problems.length > 0) return { ok: false, problems };
  const outDir = d.outDir.trim();
  return {
    ok: true,
    input: {
      request,
      formats,
      sign: !d.sign
        ? null
        : d.signWith === 'agent'
          ? { agent: true, ...(d.agentKey.trim() ? { key: d.agentKey.trim() } : {}) }
          : { keyFile, ...(d.passphrase !== '' ? { passphrase: d.passphrase } : {}) },
      ...(outDir ? { outDir } : {}),
    },
  };
}

/** The draft after an export, whatever its outcome: the passphrase is gone. */
export function afterExport(d: ExportDraft): ExportDraft {
  return d.passphrase === '' ? d : { ...d, passphrase: '' };
}
