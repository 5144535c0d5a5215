import type { Output } from '../output.js';

/** A command a capability adds to `gpu-console` (one or two words, e.g. "tokens" or "hosts import-ssh-config"). */
export interface CliCommand {
  name: string;
  /** Lines for --help, already indented by the caller. */
  help: string;
  run(args: string[], output: Output): Promise<number>;
}
