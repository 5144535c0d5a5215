// Reads one log command's stream: stdout and stderr split into lines (each
// with its own bound), parsed as the source writes them, and the source's own
// complaints on stderr recognised as they come (a follow that may not read
// the journal ends at once rather than showing an empty view forever).
import type { AppError } from '../base/index.js';
import type { ExecExit, ExecStream } from '../ssh/index.js';
import { LineSplitter, type RawLine } from './lines.js';
import { isNotice, JOURNAL_JSON_MAX_BYTES, parseStderr, parseStdout, sourceProblem, type LogRecord, type SourceNotice } from './source-output.js';
import type { LogSource } from './sources.js';

export interface ReadHandlers {
  record(r: LogRecord): void;
  notice(n: SourceNotice): void;
  /** The source's own stderr named a problem: reading stops, and the stream is closed. */
  problem(err: AppError): void;
}

export interface ReadOptions {
  source: LogSource;
  maxLineBytes: number;
  /** The SSH user, named in a problem's fix. */
  user: string;
  following: boolean;
}

export interface ReadEnd {
  exit: ExecExit;
  /** The last of the source's own stderr lines (not the container's), for the error of a failed exit. */
  ownStderr: string;
}

/**
 * Reads `stream` to its end. Resolves with the exit and the source's own
 * stderr; rejects with the stream's error (a lost link, a cancel). After a
 * problem, resolves once the stream is closed (the caller has the problem).
 */
export async function readLogStream(stream: ExecStream, options: ReadOptions, on: ReadHandlers): Promise<ReadEnd> {
  const { source } = options;
  const out = new LineSplitter(source.kind === 'journal' ? JOURNAL_JSON_MAX_BYTES : options.maxLineBytes);
  const err = new LineSplitter(options.maxLineBytes);
  let ownStderr = '';
  let stopped = false;
  const onStderr = (raw: RawLine): void => {
    const parsed = parseStderr(source.kind, raw);
    if (isNotice(parsed)) {
      // tail's words are its own: a failed tail of a missing file is named by them.
      ownStderr = (ownStderr + parsed.text + '\n').slice(-4096);
      return on.notice(parsed);
    }
    // Docker's own words carry no timestamp; the container's lines do. A command's stderr is all its own output.
    const own = source.kind === 'journal' || source.kind === 'file' || ((source.kind === 'docker' || source.kind === 'compose') && parsed.ts === null);
    if (own) {
      ownStderr = (ownStderr + parsed.text + '\n').slice(-4096);
      const problem = sourceProblem(source, parsed.text, null, options.user, options.following);
      if (problem) {
        stopped = true;
        on.problem(problem);
        stream.close();
        return;
      }
    }
    on.record(parsed);
  };
  try {
    for await (const chunk of stream) {
      if (stopped) break;
      if (chunk.fd === 'stdout') for (const raw of out.push(chunk.data)) for (const r of parseStdout(source.kind, raw, options.maxLineBytes)) on.record(r);
      else for (const raw of err.push(chunk.data)) if (!stopped) onStderr(raw);
    }
  } catch (e) {
    if (stopped) return { exit: { exitCode: null, signal: null }, ownStderr };
    throw e;
  }
  if (stopped) return { exit: { exitCode: null, signal: null }, ownStderr };
  const lastOut = out.flush();
  if (lastOut) for (const r of parseStdout(source.kind, lastOut, options.maxLineBytes)) on.record(r);
  const lastErr = err.flush();
  if (lastErr) onStderr(lastErr);
  return { exit: await stream.exit, ownStderr };
}
