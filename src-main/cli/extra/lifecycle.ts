// `gpu-console` commands of the lifecycle capability.
import type { CliCommand } from './types.js';

export const lifecycleCommands: CliCommand[] = [];
