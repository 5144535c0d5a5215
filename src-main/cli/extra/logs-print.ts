// How `gpu-console logs` writes what the console sent, as `kubectl logs` does:
// the log's lines on stdout and nothing else there, so `> file`, `| grep` and
// `| less` see the service's own text; what the console says about them
// (drops, gaps, a lost link, rotation, a cut line, a failure it recognised) on
// stderr as short bracketed lines. With --json every entry, line or marker, is
// one JSON object per line on stdout (the contract's LogEntry).
import type { LogEntry, LogSourceView } from '../../../src-preload/contract/index.js';
import { escapeControls } from '../../core/base/index.js';
import { shown, type Output } from '../output.js';

export interface PrintOptions {
  timestamps: boolean;
  json: boolean;
}

export type EntryPrinter = (entry: LogEntry) => void;

/**
 * A line's text for stdout: control characters as visible escapes (a log line is text from outside);
 * tabs kept, as the server wrote them. The splitter leaves no newline in a line; one shown as `\n`
 * here would still not start a line of its own.
 */
export function lineText(text: string): string {
  return escapeControls(text, { lines: true }).replace(/\n/g, '\\n');
}

export function entryPrinter(output: Output, options: PrintOptions): EntryPrinter {
  if (options.json) return (entry) => output.out(JSON.stringify(entry));
  return (entry) => {
    if (entry.type === 'marker') {
      output.err(`[${shown(entry.text)}]`);
      return;
    }
    // The source's own time, never the arrival time: a line without one is printed bare.
    const stamp = options.timestamps && entry.ts !== null ? `${new Date(entry.ts).toISOString()} ` : '';
    output.out(`${stamp}${lineText(entry.text)}`);
    if (entry.cutBytes > 0) output.err(`[line cut: ${entry.cutBytes} more bytes not shown]`);
    // On stderr, not in the line: stdout stays the service's own text, while a terminal (or one
    // watching stderr while stdout goes to a file) still sees which lines the console recognised.
    if (entry.failure) output.err(`[failure: ${entry.failure}]`);
  };
}

/** Said once before the lines when --timestamps cannot be honoured: the source has none. */
export function sourceNotes(output: Output, source: LogSourceView, options: PrintOptions): void {
  if (options.json || !options.timestamps || source.timestamps) return;
  output.err(`[${shown(source.description)} has no timestamps: lines are printed without]`);
}
