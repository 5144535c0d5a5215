// Adds hosts from an OpenSSH client config to the inventory. Main reads
// ~/.ssh/config (with its Includes) itself, or a file the operator picked in
// the desktop shell's dialog, or content the browser uploaded: no path comes
// from the renderer. A preview is kept for its apply, so the apply writes
// exactly what the operator saw. Imported hosts are written into the YAML
// config file (the one inventory) and reloaded. The file's lines that make
// ssh run a command are shown in the preview, never run there, and the apply
// adds a host they apply to only when the operator acknowledged each of them.
import { createHash, randomBytes } from 'node:crypto';
import { userInfo } from 'node:os';
import { join } from 'node:path';
import type { SshConfigApplyResult, SshConfigCommand, SshConfigPreview, SshConfigSource } from '../../../src-preload/contract/index.js';
import { AppError, operatorActor, type Clock } from '../base/index.js';
import type { ConfigService } from '../config/index.js';
import type { FilePicker } from '../ports.js';
import {
  SshErrorCode,
  commandEffect,
  importSshConfig,
  loadSshConfigTree,
  mergeHostsIntoYaml,
  readConfigText,
  writeFileAtomically,
  type CommandDirective,
  type ImportedHost,
  type SshConfigIssue,
  type SshConfigLine,
} from '../ssh/index.js';
import type { AuditLog } from '../store/index.js';
import type { ConfigSource } from './host-service.js';

export interface SshConfigImportDeps {
  config: ConfigService;
  audit: AuditLog;
  clock: Clock;
  home: string;
  /** The desktop shell's native dialog; headless, none. */
  filePicker: FilePicker | null;
  /** A config the bridge handed over (not the file's): the file is written but not loaded. */
  configSource: ConfigSource;
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

interface HeldPreview {
  at: number;
  file: string;
  sourcePath: string | null;
  hosts: ImportedHost[];
  commands: SshConfigCommand[];
}

/** The preview's command lines with their hosts by label and what applying means for each. */
function commandViews(commands: readonly CommandDirective[], hosts: readonly ImportedHost[], uploaded: boolean): SshConfigCommand[] {
  return commands.map((c) => {
    const of = hosts.filter((h) => c.aliases.includes(h.alias));
    // Only a host connected through the operator's file (its alias, and the file kept on disk) has ssh read the line.
    const readBy = uploaded ? [] : of.filter((h) => h.configHost !== null).map((h) => h.label);
    return { id: c.id, directive: c.directive, text: c.text, file: c.file, line: c.line, hosts: of.map((h) => h.label), effect: commandEffect(c, readBy, uploaded) };
  });
}

/** The acknowledgement an apply needs: every command line of every host it adds; unknown ids are refused. */
function assertAcknowledged(p: HeldPreview, adding: readonly ImportedHost[], acknowledged: readonly string[]): SshConfigCommand[] {
  const unknown = acknowledged.filter((id) => !p.commands.some((c) => c.id === id));
  if (unknown.length > 0) {
    throw new AppError(SshErrorCode.CONFIG_UNSUPPORTED, `no command line ${unknown.join(', ')} in this preview of ${p.file}`, { details: { unknown } });
  }
  const ack = new Set(acknowledged);
  const missing = adding.flatMap((h) => h.commands.filter((id) => !ack.has(id)).map((id) => ({ host: h.label, command: p.commands.find((c) => c.id === id)! })));
  if (missing.length > 0) {
    const list = missing.map((m) => `${m.host}: ${m.command.directive} (line ${m.command.line}${m.command.file ? ` of ${m.command.file}` : ''})`);
    throw new AppError(
      SshErrorCode.IMPORT_COMMAND_NOT_ACKNOWLEDGED,
      `nothing written: ${[...new Set(list)].join('; ')} make${missing.length === 1 ? 's' : ''} ssh run a command; acknowledge each (tick it) to add these hosts`,
      { details: { hosts: [...new Set(missing.map((m) => m.host))], commands: [...new Set(missing.map((m) => m.command.id))] } },
    );
  }
  const needed = new Set(adding.flatMap((h) => h.commands));
  return p.commands.filter((c) => needed.has(c.id));
}

export class SshConfigImportService {
  /** Bounded; the oldest goes first. */
  private readonly previews = new Map<string, HeldPreview>();

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
    const commands = commandViews(result.commands, result.hosts, got.sourcePath === null);
    this.previews.set(previewId, { at: now, file: got.file, sourcePath: got.sourcePath, hosts: result.hosts, commands });
    if (got.sourcePath === null) {
      for (const h of result.hosts) {
        if (h.configHost) h.notes.push('uploaded: the openssh transport reads the file from disk; add ssh.configHost and ssh.configFile by hand, or import the file by path');
      }
    }
    return {
      previewId,
      file: got.file,
      files: got.files,
      hosts: result.hosts.map((h) => ({ ...h, notes: [...h.notes], commands: [...h.commands], exists: existing.has(h.label.toLowerCase()) })),
      skipped: result.skipped,
      issues: result.issues,
      commands,
      configFile: config.path,
    };
  }

  async apply(previewId: string, labels: readonly string[], acknowledged: readonly string[], caller: string): Promise<SshConfigApplyResult> {
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
    // Hosts the file already has are not added, so only the added ones need their command lines acknowledged.
    const ran = assertAcknowledged(p, chosen.filter((h) => merged.added.includes(h.label)), acknowledged);
    if (merged.added.length > 0) await writeFileAtomically(config.path, merged.text);
    let reloaded = false;
    let note: string | null = null;
    if (merged.added.length > 0) {
      const source = this.deps.configSource;
      if (!source.fromFile) {
        note = `written to ${config.path}, not loaded: ${source.reason}`;
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
      // The command lines the operator acknowledged, by place and digest: their text may hold what an audit row must not.
      payload: {
        source: p.file,
        added: merged.added,
        skipped: merged.skipped.map((s) => s.alias),
        reloaded,
        acknowledgedCommands: ran.map((c) => ({ directive: c.directive, file: c.file, line: c.line, hosts: c.hosts, sha256: createHash('sha256').update(c.text).digest('hex') })),
      },
    });
    return { configFile: config.path, added: merged.added, skipped: merged.skipped, reloaded, note };
  }
}
