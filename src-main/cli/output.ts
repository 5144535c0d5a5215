// How commands talk to the terminal: human text by default, one JSON document
// with --json. Errors always name what went wrong and exit non-zero.
//
// Much of what the CLI prints came from outside the console: a host's error
// or login question, a proposal's reason, a model or GPU name a server gave, a
// host name from an imported file. A terminal would obey the escape sequences
// in it, so every line written here has its control characters shown as
// escapes (the CLI's own newlines and tabs kept), and each such field is also
// passed through `shown()` where it is put in a line, so that a newline in it
// cannot forge a line of the CLI's own.
import { escapeControls, escapeJsonControls } from '../core/base/index.js';

export interface Output {
  json: boolean;
  out(line: string): void;
  err(line: string): void;
}

/** A field that came from outside, for one line of human output: no control character, no line break. */
export function shown(text: string | null | undefined): string {
  return escapeControls(text ?? '');
}

export function createOutput(json: boolean, io: { stdout?: (s: string) => void; stderr?: (s: string) => void } = {}): Output {
  const stdout = io.stdout ?? ((s: string) => process.stdout.write(s));
  const stderr = io.stderr ?? ((s: string) => process.stderr.write(s));
  const human = (line: string) => escapeControls(line, { lines: true }) + '\n';
  return {
    json,
    // A JSON document keeps its value; only the characters JSON.stringify leaves raw become \u escapes.
    out: (line) => stdout(json ? escapeJsonControls(line) + '\n' : human(line)),
    err: (line) => stderr(human(line)),
  };
}

/** Where the CLI's logger writes: stderr, one line per entry, with the same escaping. */
export function logLine(line: string): void {
  process.stderr.write(escapeControls(line) + '\n');
}

export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
}

export const EXIT = { OK: 0, FAILED: 1, USAGE: 2 } as const;
