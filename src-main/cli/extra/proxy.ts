// `gpu-console` commands of the proxy capability.
import type { CliCommand } from './types.js';

export const proxyCommands: CliCommand[] = [];
