// `gpu-console` commands of the bench capability.
import type { CliCommand } from './types.js';

export const benchCommands: CliCommand[] = [];
