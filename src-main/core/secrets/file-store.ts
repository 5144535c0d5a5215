// Headless mode keeps secrets in one JSON file readable only by the user
// (mode 0600 in a 0700 folder). It is as safe as ~/.ssh/id_* files, no safer:
// the README says so. The file is checked for its mode before it is read, and
// written atomically so a crash never leaves half a file.
import { randomBytes } from 'node:crypto';
import { chmodSync, mkdirSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { AppError } from '../base/index.js';
import type { SecretStore } from '../ports.js';
import { SecretsErrorCode } from './errors.js';
import { checkKey } from './keys.js';

export class FileSecretStore implements SecretStore {
  readonly kind = 'file';
  readonly persistent = true;

  constructor(private readonly file: string) {}

  private read(): Record<string, string> {
    let mode: number;
    try {
      mode = statSync(this.file).mode;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return {};
      throw new AppError(SecretsErrorCode.UNREADABLE, `cannot read the secrets file ${this.file}`, { cause: err });
    }
    if (process.platform !== 'win32' && (mode & 0o077) !== 0) {
      throw new AppError(
        SecretsErrorCode.INSECURE_FILE,
        `the secrets file ${this.file} is readable by other users (mode ${(mode & 0o777).toString(8)}); run: chmod 600 '${this.file}'`,
      );
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(readFileSync(this.file, 'utf8'));
    } catch (err) {
      throw new AppError(SecretsErrorCode.UNREADABLE, `the secrets file ${this.file} is not valid JSON`, { cause: err });
    }
    if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed) || Object.values(parsed).some((v) => typeof v !== 'string')) {
      throw new AppError(SecretsErrorCode.UNREADABLE, `the secrets file ${this.file} does not hold name → secret pairs`);
    }
    return parsed as Record<string, string>;
  }

  private write(values: Record<string, string>): void {
    mkdirSync(dirname(this.file), { recursive: true, mode: 0o700 });
    const tmp = `${this.file}.${randomBytes(4).toString('hex')}.tmp`;
    writeFileSync(tmp, JSON.stringify(values), { mode: 0o600 });
    chmodSync(tmp, 0o600);
    renameSync(tmp, this.file);
  }

  async get(key: string): Promise<string | null> {
    checkKey(key);
    return this.read()[key] ?? null;
  }

  async set(key: string, value: string): Promise<void> {
    checkKey(key);
    this.write({ ...this.read(), [key]: value });
  }

  async delete(key: string): Promise<void> {
    checkKey(key);
    const values = this.read();
    if (!(key in values)) return;
    delete values[key];
    this.write(values);
  }

  async list(): Promise<string[]> {
    return Object.keys(this.read()).sort();
  }
}
