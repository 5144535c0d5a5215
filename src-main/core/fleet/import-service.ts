// Adds hosts from an OpenSSH client config to the inventory. Main reads
// ~/.ssh/config (with its Includes) itself, or a file the operator picked in
// the desktop shell's dialog, or content the browser uploaded: no path comes
// from the renderer. A preview is kept for its apply, so the apply writes
// exactly what the operator saw. Imported hosts are written into the YAML
// config file (the one inventory) and reloaded.
import { randomBytes } from 'node:crypto';
import { userInfo } from 'node:os';
import { join } from 'node:path';
import type { SshConfigApplyResult, SshConfigPreview, SshConfigSource } from '../../../src-preload/contract/index.js';
import { AppError, operatorActor, type Clock } from '../base/index.js';
import type { ConfigService } from '../config/index.js';
import type { FilePicker } from '../ports.js';
import {
  SshErrorCode,
  importSshConfig,
  loadSshConfigTree,
  mergeHostsIntoYaml,
  readConfigText,
  writeFileAtomically,
  type ImportedHost,
  type SshConfigIssue,
  type SshConfigLine,
} from '../ssh/index.js';
import type { AuditLog } from '../store/index.js';

export interface SshConfigImportDeps {
  config: ConfigService;
  audit: AuditLog;
  clock: Clock;
  home: string;
  /** The desktop shell's native dialog; headless, none. */
  filePicker: FilePicker | null;
  /** The console runs the built-in demo fleet: the file is written but not loaded. */
  demo: boolean;
  reload(): Promise<AppError | null>;
}

const PREVIEWS_KEPT = 8;
const PREVIEW_TTL_MS = 30 * 60_000;

function localUser(): string {
  try {
    return userInfo().username;
  } catch {
    return 'root';
  }
}

interface Read {
  file: string;
  /** The OpenSSH config on disk the hosts came from (null: uploaded text). */
  sourcePath: string | null;
  files: string[];
  lines: SshConfigLine[] | string;
  issues: SshConfigIssue[];
}

export class SshConfigImportService {
  /** Bounded; the oldest goes first. */
  private readonly previews = new Map<string, { at: number; file: string; sourcePath: string | null; hosts: ImportedHost[] }>();

  constructor(private readonly deps: SshConfigImportDeps) {}

  private async read(source: SshConfigSource, signal: AbortSignal | undefined): Promise<Read | null> {
    if (source.kind === 'content') return { file: `${source.name} (uploaded)`, sourcePath: null, files: [], lines: source.text, issues: [] };
    let path = join(this.deps.home, '.ssh', 'config');
    if (source.kind === 'dialog') {
      const picker = this.deps.filePicker;
      if (!picker) {
        throw new AppError(SshErrorCode.IMPORT_SOURCE_UNAVAILABLE, 'the headless console has no file dialog: choose the file in the browser (its content is uploaded)');
      }
      const chosen = await picker.chooseFile({ title: 'Import hosts from an SSH config', defaultPath: path, signal });
      if (chosen === null) return null;
      path = chosen;
    }
    const loaded = await loadSshConfigTree(path, this.deps.home, signal);
    return { file: path, sourcePath: path, files: loaded.files, lines: loaded.lines, issues: loaded.issues };
  }

  /** Null: the operator closed the file dialog. */
  async preview(source: SshConfigSource, caller: string, signal?: AbortSignal): Promise<SshConfigPreview | null> {
    const { config, clock } = this.deps;
    const got = await this.read(source, signal);
    if (!got) return null;
    // What was read, by whom: the files' names, never their text.
    this.deps.audit.append({
      type: 'hosts.import.previewed',
      actor: operatorActor(caller),
      target: got.file,
      payload: { source: source.kind, files: got.files, bytes: source.kind === 'content' ? Buffer.byteLength(source.text) : null },
    });
    const result = importSshConfig(got.lines, { home: this.deps.home, localUser: localUser() }, got.issues);
    const existing = new Set(config.current.hosts.map((h) => h.label.toLowerCase()));
    const fromFile = await readConfigText(config.path).catch(() => null);
    if (fromFile) {
      for (const m of fromFile.matchAll(/^\s*-?\s*label:\s*["']?([A-Za-z0-9._-]+)/gm)) existing.add(m[1]!.toLowerCase());
    }
    const now = clock.now();
    for (const [id, p] of this.previews) if (now - p.at > PREVIEW_TTL_MS) this.previews.delete(id);
    while (this.previews.size >= PREVIEWS_KEPT) this.previews.delete(this.previews.keys().next().value!);
    const previewId = randomBytes(12).toString('base64url');
    this.previews.set(previewId, { at: now, file: got.file, sourcePath: got.sourcePath, hosts: result.hosts });
    if (got.sourcePath === null) {
      for (const h of result.hosts) {
        if (h.configHost) h.notes.push('uploaded: the openssh transport reads the file from disk; add ssh.configHost and ssh.configFile by hand, or import the file by path');
      }
    }
    return {
      previewId,
      file: got.file,
      files: got.files,
      hosts: result.hosts.map((h) => ({ ...h, notes: [...h.notes], exists: existing.has(h.label.toLowerCase()) })),
      skipped: result.skipped,
      issues: result.issues,
      configFile: config.path,
    };
  }

  async apply(previewId: string, labels: readonly string[], caller: string): Promise<SshConfigApplyResult> {
    const { config } = this.deps;
    const p = this.previews.get(previewId);
    if (!p || this.deps.clock.now() - p.at > PREVIEW_TTL_MS) {
      throw new AppError(SshErrorCode.IMPORT_PREVIEW_UNKNOWN, 'this preview is no longer held (expired, or the console restarted): read the file again', {
        details: { previewId },
      });
    }
    const wanted = new Set(labels.map((l) => l.toLowerCase()));
    const unknown = labels.filter((l) => !p.hosts.some((h) => h.label.toLowerCase() === l.toLowerCase()));
    if (unknown.length > 0) {
      throw new AppError(SshErrorCode.CONFIG_UNSUPPORTED, `not in ${p.file}: ${unknown.join(', ')}`, { details: { unknown } });
    }
    const chosen = p.hosts.filter((h) => wanted.has(h.label.toLowerCase()));
    const existing = await readConfigText(config.path);
    const merged = mergeHostsIntoYaml(existing, chosen, { file: config.path, home: this.deps.home, sshConfigFile: p.sourcePath });
    if (merged.added.length > 0) await writeFileAtomically(config.path, merged.text);
    let reloaded = false;
    let note: string | null = null;
    if (merged.added.length > 0) {
      if (this.deps.demo) {
        note = `written to ${config.path}; the console runs the demo fleet — restart it without --demo to use these hosts`;
      } else {
        const error = await this.deps.reload();
        reloaded = error === null;
        if (error) note = `written, but the reload failed: ${error.code}: ${error.message}`;
      }
    }
    this.deps.audit.append({
      type: 'hosts.imported',
      actor: operatorActor(caller),
      target: config.path,
      payload: { source: p.file, added: merged.added, skipped: merged.skipped.map((s) => s.alias), reloaded },
    });
    return { configFile: config.path, added: merged.added, skipped: merged.skipped, reloaded, note };
  }
}
