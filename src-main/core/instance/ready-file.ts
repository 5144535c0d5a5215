import { randomBytes } from 'node:crypto';
import { readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { AppError } from '../base/index.js';
import { InstanceErrorCode } from './errors.js';

// A running console announces itself in `<dataDir>/ready.json` (0600): the UI
// URL with its token, the proxy URL and the pid. Other `gpu-console` commands
// find the running console through it; a stale file (dead pid) is ignored.

export const READY_FILE_NAME = 'ready.json';

export const ReadyInfoSchema = z
  .object({
    ui: z.string().url(),
    proxy: z.string().url().nullable(),
    pid: z.number().int().positive(),
  })
  .strict();
export type ReadyInfo = z.infer<typeof ReadyInfoSchema>;

export function readyFilePath(dataDir: string): string {
  return join(dataDir, READY_FILE_NAME);
}

/** Writes atomically (temp file + rename) so a reader never sees half a file. */
export function writeReadyFile(file: string, info: ReadyInfo): void {
  const tmp = `${file}.${randomBytes(4).toString('hex')}.tmp`;
  writeFileSync(tmp, JSON.stringify(info) + '\n', { mode: 0o600 });
  renameSync(tmp, file);
}

export function removeReadyFile(file: string, pid: number): void {
  // Only remove our own announcement, never a newer console's.
  const current = readReadyFileRaw(file);
  if (current && current.pid !== pid) return;
  rmSync(file, { force: true });
}

function readReadyFileRaw(file: string): ReadyInfo | null {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return null;
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new AppError(InstanceErrorCode.READY_FILE_INVALID, `${file} is not valid JSON`);
  }
  const parsed = ReadyInfoSchema.safeParse(json);
  if (!parsed.success) throw new AppError(InstanceErrorCode.READY_FILE_INVALID, `${file} does not describe a running console`);
  return parsed.data;
}

export function isProcessAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** The running console for this data dir, or null when none is running. */
export function findRunningConsole(dataDir: string): ReadyInfo | null {
  const info = readReadyFileRaw(readyFilePath(dataDir));
  if (!info || !isProcessAlive(info.pid)) return null;
  return info;
}
