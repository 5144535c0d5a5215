// How commands talk to the terminal: human text by default, one JSON document
// with --json. Errors always name what went wrong and exit non-zero.

export interface Output {
  json: boolean;
  out(line: string): void;
  err(line: string): void;
}

export function createOutput(json: boolean, io: { stdout?: (s: string) => void; stderr?: (s: string) => void } = {}): Output {
  const stdout = io.stdout ?? ((s: string) => process.stdout.write(s));
  const stderr = io.stderr ?? ((s: string) => process.stderr.write(s));
  return { json, out: (line) => stdout(line + '\n'), err: (line) => stderr(line + '\n') };
}

export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
}

export const EXIT = { OK: 0, FAILED: 1, USAGE: 2 } as const;
