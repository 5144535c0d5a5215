// Imported ~/.ssh/config hosts go into the operator's YAML config file, the one
// inventory the console reads: appended under `hosts:` (comments and layout of
// the file kept), validated as a whole before anything is written, and written
// atomically (temp file + rename) so a crash never leaves half a config.
import { randomBytes } from 'node:crypto';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { isMap, isSeq, parseDocument, YAMLSeq } from 'yaml';
import { AppError } from '../base/index.js';
import { ConfigErrorCode, parseConfig } from '../config/index.js';
import type { ImportedHost, SkippedHost } from './ssh-config.js';

/** The YAML shape of one imported host (services are left for the operator to add). */
export function hostEntry(h: ImportedHost, configFile: string | null = null): Record<string, unknown> {
  const ssh: Record<string, unknown> = { host: h.host, port: h.port, user: h.user };
  // What only ssh reads stays in the operator's file: the openssh transport connects to the alias.
  if (h.configHost && configFile) {
    ssh['configHost'] = h.configHost;
    ssh['configFile'] = configFile;
  }
  if (h.identityFile) ssh['identityFile'] = h.identityFile;
  if (h.agent) ssh['agent'] = true;
  if (h.jumpHost) ssh['jumpHost'] = h.jumpHost;
  if (h.keepaliveIntervalMs) ssh['keepaliveIntervalMs'] = Math.max(1000, h.keepaliveIntervalMs);
  const entry: Record<string, unknown> = { label: h.label, ssh };
  if (h.knownHostsFile) entry['knownHostsFile'] = h.knownHostsFile;
  entry['services'] = [];
  return entry;
}

export interface MergeResult {
  text: string;
  added: string[];
  skipped: SkippedHost[];
}

/** Appends hosts whose label is not in the file yet; the result is checked against the config schema. */
export function mergeHostsIntoYaml(
  existing: string | null,
  hosts: readonly ImportedHost[],
  /** `sshConfigFile`: the OpenSSH config the hosts were read from, on disk (null: uploaded text). */
  options: { file: string; home: string; sshConfigFile?: string | null },
): MergeResult {
  const doc = parseDocument(existing ?? '');
  if (doc.errors.length > 0) {
    throw new AppError(ConfigErrorCode.INVALID, `${options.file} is not valid YAML (${doc.errors[0]!.message}); fix it before importing`, {
      details: { file: options.file },
    });
  }
  if (doc.contents === null || doc.contents === undefined) doc.contents = doc.createNode({}) as never;
  if (!isMap(doc.contents)) throw new AppError(ConfigErrorCode.INVALID, `${options.file} does not hold a mapping at the top`, { details: { file: options.file } });
  let seq = doc.get('hosts');
  if (seq === undefined || seq === null) {
    seq = new YAMLSeq();
    doc.set('hosts', seq);
  }
  if (!isSeq(seq)) throw new AppError(ConfigErrorCode.INVALID, `${options.file}: "hosts" is not a list`, { details: { file: options.file } });
  const taken = new Set(
    (doc.toJS() as { hosts?: { label?: unknown }[] }).hosts?.map((h) => (typeof h?.label === 'string' ? h.label.toLowerCase() : '')) ?? [],
  );
  const added: string[] = [];
  const skipped: SkippedHost[] = [];
  for (const h of hosts) {
    if (taken.has(h.label.toLowerCase())) {
      skipped.push({ alias: h.alias, reason: `a host labelled ${h.label} is already in ${options.file}` });
      continue;
    }
    taken.add(h.label.toLowerCase());
    seq.add(doc.createNode(hostEntry(h, options.sshConfigFile ?? null)));
    added.push(h.label);
  }
  const text = doc.toString();
  // The whole file must still be a valid config, or nothing is written.
  parseConfig(text, { file: options.file, home: options.home });
  return { text, added, skipped };
}

export async function readConfigText(file: string): Promise<string | null> {
  try {
    return await readFile(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw new AppError(ConfigErrorCode.UNREADABLE, `cannot read ${file}: ${(err as Error).message}`, { details: { file }, cause: err });
  }
}

export async function writeFileAtomically(file: string, text: string): Promise<void> {
  await mkdir(dirname(file), { recursive: true, mode: 0o700 });
  const tmp = `${file}.${randomBytes(6).toString('hex')}.tmp`;
  await writeFile(tmp, text, { mode: 0o600 });
  await rename(tmp, file);
}

/** `~/x` → `<home>/x`; other paths as given. */
export function expandTilde(path: string, home: string): string {
  if (path === '~') return home;
  return path.startsWith('~/') ? `${home}/${path.slice(2)}` : path;
}
