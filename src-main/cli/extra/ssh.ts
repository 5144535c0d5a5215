// `gpu-console` commands of the ssh capability.
import type { CliCommand } from './types.js';

export const sshCommands: CliCommand[] = [];
