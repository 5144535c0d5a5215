// The `gpu-console` command (package.json bin → bin/gpu-console.js → this file, built to out/main/cli.js).
import { runCli } from './cli/run.js';

runCli(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    process.stderr.write(`gpu-console: unexpected error: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exitCode = 1;
  },
);
