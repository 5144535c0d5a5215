import { resolve } from 'node:path';
import { homedir } from 'node:os';
import { defaultDataDir } from '../core/instance/index.js';
import { UsageError } from './output.js';

export function parsePort(flag: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  if (!/^\d{1,5}$/.test(value) || Number(value) > 65535) {
    throw new UsageError(`${flag} must be a port number between 0 and 65535 (0 = any free port), got "${value}"`);
  }
  return Number(value);
}

export function parsePositiveInt(flag: string, value: string | undefined, max: number): number | undefined {
  if (value === undefined) return undefined;
  if (!/^\d+$/.test(value) || Number(value) < 1 || Number(value) > max) {
    throw new UsageError(`${flag} must be a whole number between 1 and ${max}, got "${value}"`);
  }
  return Number(value);
}

export function resolveDataDir(flag: string | undefined): string {
  return flag ? resolve(flag) : defaultDataDir(process.env, process.platform, homedir());
}
