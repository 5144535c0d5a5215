// Reads an OpenSSH client config from disk the way ssh does: the file, with
// every `Include` inlined where it stands (relative paths from ~/.ssh, `~`
// expanded, `*` and `?` globs in the file name, sorted, at most 16 levels deep
// as in OpenSSH). Only main calls this, with a path main chose (the default
// ~/.ssh/config, or one the operator picked in a native dialog): no channel
// hands it a path.
import { readdir, readFile } from 'node:fs/promises';
import { basename, dirname, isAbsolute, join } from 'node:path';
import { AppError, isCancellation } from '../base/index.js';
import { SshErrorCode } from './errors.js';
import { directiveOf, splitConfigLines, type SshConfigIssue, type SshConfigLine } from './ssh-config-parse.js';

export interface LoadedSshConfig {
  lines: SshConfigLine[];
  /** Every file read, the first one first. */
  files: string[];
  issues: SshConfigIssue[];
}

const MAX_DEPTH = 16;
const MAX_FILES = 256;
const MAX_TOTAL_BYTES = 4 * 1024 * 1024;

function globToRegExp(pattern: string): RegExp {
  const body = pattern.replace(/[.+^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '[^/]*').replace(/\?/g, '[^/]');
  return new RegExp(`^${body}$`);
}

async function expandInclude(arg: string, home: string): Promise<string[]> {
  let path = arg === '~' ? home : arg.startsWith('~/') ? join(home, arg.slice(2)) : arg;
  if (!isAbsolute(path)) path = join(home, '.ssh', path);
  const name = basename(path);
  if (!/[*?]/.test(name)) return [path];
  const dir = dirname(path);
  if (/[*?]/.test(dir)) return []; // globs in folder names are not followed (reported by the caller)
  const re = globToRegExp(name);
  try {
    return (await readdir(dir)).filter((f) => re.test(f) && !f.startsWith('.')).sort().map((f) => join(dir, f));
  } catch {
    return [];
  }
}

/** A file-system error as its errno code; our own coded errors (size, cancellation) go on up. */
function errnoOf(err: unknown): { kind: 'errno'; code: string; cause: unknown } {
  if (err instanceof AppError || isCancellation(err)) throw err;
  return { kind: 'errno', code: (err as NodeJS.ErrnoException).code ?? 'EIO', cause: err };
}

/** The config at `path` with its Includes; a coded error only when the first file cannot be read. */
export async function loadSshConfigTree(path: string, home: string, signal?: AbortSignal): Promise<LoadedSshConfig> {
  const files: string[] = [];
  const issues: SshConfigIssue[] = [];
  let total = 0;

  const read = async (file: string): Promise<{ kind: 'text'; text: string }> => {
    signal?.throwIfAborted();
    const text = await readFile(file, 'utf8');
    total += Buffer.byteLength(text);
    if (total > MAX_TOTAL_BYTES) throw new AppError(SshErrorCode.CONFIG_UNREADABLE, `${path} and its Includes are over ${MAX_TOTAL_BYTES} bytes`);
    files.push(file);
    return { kind: 'text', text };
  };

  const walk = async (file: string, text: string, depth: number, shownAs: string | null): Promise<SshConfigLine[]> => {
    const out: SshConfigLine[] = [];
    for (const line of splitConfigLines(text, shownAs)) {
      out.push(line);
      const d = directiveOf(line.text);
      if (!d || d === 'blank' || d.name.toLowerCase() !== 'include') continue;
      const issue = (message: string) => issues.push({ file: line.file, line: line.line, directive: d.name, severity: 'warning', message });
      if (d.args.length === 0) {
        issue('Include without a file');
        continue;
      }
      if (depth >= MAX_DEPTH) {
        issue(`Include nested more than ${MAX_DEPTH} levels deep; not followed`);
        continue;
      }
      for (const arg of d.args) {
        const targets = await expandInclude(arg, home);
        if (targets.length === 0 && /[*?]/.test(arg)) {
          issues.push({ file: line.file, line: line.line, directive: d.name, severity: 'info', message: `Include ${arg} matches no file` });
        }
        for (const target of targets) {
          if (files.includes(target)) {
            issue(`Include ${target} was already read; not read again`);
            continue;
          }
          if (files.length >= MAX_FILES) {
            issue(`more than ${MAX_FILES} files included; the rest are not read`);
            break;
          }
          const included = await read(target).catch((err: unknown) => errnoOf(err));
          if (included.kind === 'errno') {
            // OpenSSH ignores a missing included file too; say so.
            issue(`Include ${target} cannot be read (${included.code}); skipped`);
            continue;
          }
          out.push(...(await walk(target, included.text, depth + 1, target)));
        }
      }
    }
    return out;
  };

  const first = await read(path).catch((err: unknown) => errnoOf(err));
  if (first.kind === 'errno') {
    throw new AppError(SshErrorCode.CONFIG_UNREADABLE, `cannot read ${path} (${first.code})`, { details: { file: path, errno: first.code }, cause: first.cause });
  }
  const lines = await walk(path, first.text, 0, null);
  return { lines, files, issues };
}
