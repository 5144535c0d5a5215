import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { LineCounter, parseDocument, type Document } from 'yaml';
import type { z } from 'zod';
import { AppError } from '../base/index.js';
import { ConfigErrorCode, type ConfigIssue } from './errors.js';
import { formatPath, locate, pathAtOffset, type FieldPath } from './locate.js';
import { ConfigSchema, type Config } from './schema.js';

export interface ParseConfigOptions {
  /** Named in messages and details, exactly as given. */
  file: string;
  /** The user's home folder: `~/…` paths expand against it. */
  home: string;
}

/** Parses and validates config text; every failure is CONFIG_INVALID with located issues. */
export function parseConfig(text: string, options: ParseConfigOptions): Config {
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { lineCounter, prettyErrors: false, uniqueKeys: true, keepSourceTokens: false });

  if (doc.errors.length > 0) {
    const issues = doc.errors.map((err): ConfigIssue => {
      const { line, col } = lineCounter.linePos(err.pos[0]);
      // After a syntax error the tree is a guess, so only a duplicate key gets a field path.
      if (err.code !== 'DUPLICATE_KEY') return { path: '', line, column: col, message: `YAML syntax: ${err.message}` };
      const path = pathAtOffset(doc, err.pos[0]);
      return { path: formatPath(path), line, column: col, message: `duplicate key "${String(path[path.length - 1] ?? '')}"` };
    });
    throw invalid(options.file, issues);
  }

  let data: unknown;
  try {
    data = doc.toJS({ maxAliasCount: 100 }) ?? {};
  } catch (err) {
    throw invalid(options.file, [{ path: '', line: 1, column: 1, message: (err as Error).message }], err);
  }

  const result = ConfigSchema.safeParse(data, { error: friendlyMessage });
  if (!result.success) throw invalid(options.file, toIssues(result.error.issues, doc, lineCounter));
  return expandHome(result.data, options.home);
}

/** Validates a config built in code (no file, so issues carry line 0). */
export function validateConfig(input: unknown, options: { home: string; source?: string }): Config {
  const result = ConfigSchema.safeParse(input, { error: friendlyMessage });
  if (!result.success) throw invalid(options.source ?? '<in-memory config>', toIssues(result.error.issues, null, null));
  return expandHome(result.data, options.home);
}

/** Reads and parses a config file. Missing → CONFIG_NOT_FOUND, unreadable → CONFIG_UNREADABLE. */
export async function loadConfigFile(file: string, options: { home: string }): Promise<Config> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') {
      throw new AppError(ConfigErrorCode.NOT_FOUND, `config file ${file} does not exist`, { details: { file }, cause: err });
    }
    throw new AppError(ConfigErrorCode.UNREADABLE, `cannot read config file ${file}: ${code ?? (err as Error).message}`, {
      details: { file, errno: code ?? null },
      cause: err,
    });
  }
  return parseConfig(text, { file, home: options.home });
}

/** `<userDataDir>/config.yaml`. */
export function defaultConfigPath(userDataDir: string): string {
  return join(userDataDir, 'config.yaml');
}

/** Expands a leading `~/` (or a lone `~`) against `home`; other paths are returned as written. */
export function expandHomePath(path: string, home: string): string {
  if (path === '~') return home;
  if (path.startsWith('~/')) return join(home, path.slice(2));
  return path;
}

function expandHome(config: Config, home: string): Config {
  return {
    ...config,
    hosts: config.hosts.map((host) => ({
      ...host,
      knownHostsFile: expandHomePath(host.knownHostsFile, home),
      ssh: {
        ...host.ssh,
        ...(host.ssh.identityFile === undefined ? {} : { identityFile: expandHomePath(host.ssh.identityFile, home) }),
      },
    })),
  };
}

type Issue = z.core.$ZodIssue;

/** Per-parse messages for the generic cases; schema-level messages (ranges, patterns) win over these. */
function friendlyMessage(issue: z.core.$ZodRawIssue): string | undefined {
  if (issue.code === 'invalid_type') {
    if (issue.input === undefined) return 'required';
    return `expected ${issue.expected}, got ${describe(issue.input)}`;
  }
  return undefined;
}

function describe(value: unknown): string {
  if (value === null) return 'nothing (null)';
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'object') return 'a mapping';
  if (typeof value === 'string') return `text ${JSON.stringify(value.length > 40 ? value.slice(0, 40) + '…' : value)}`;
  return `${typeof value} ${String(value)}`;
}

function toIssues(zodIssues: readonly Issue[], doc: Document | null, lineCounter: LineCounter | null): ConfigIssue[] {
  const out: ConfigIssue[] = [];
  const place = (path: FieldPath, target: 'value' | 'key') =>
    doc && lineCounter ? locate(doc, lineCounter, path, target) : { line: 0, column: 0 };
  for (const issue of zodIssues) {
    if (issue.code === 'unrecognized_keys') {
      for (const key of issue.keys) {
        const path = [...issue.path, key];
        out.push({ path: formatPath(path), ...place(path, 'key'), message: `unknown key "${key}"` });
      }
    } else {
      out.push({ path: formatPath(issue.path), ...place(issue.path, 'value'), message: issue.message });
    }
  }
  // Report in file order so the first issue is the first place to fix.
  return out.sort((a, b) => a.line - b.line || a.column - b.column);
}

function invalid(file: string, issues: ConfigIssue[], cause?: unknown): AppError {
  const first = issues[0];
  const where = first && first.line > 0 ? `${file}:${first.line}:${first.column}` : file;
  const what = first ? `${first.path ? `${first.path}: ` : ''}${first.message}` : 'invalid config';
  return new AppError(ConfigErrorCode.INVALID, `${where} ${what}`, { details: { file, issues }, cause });
}
