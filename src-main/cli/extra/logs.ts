// `gpu-console logs HOST/SERVICE`: a service's log through the RUNNING
// console, which reads it over its SSH session to the host and masks secrets
// before a line leaves it. No console is started for the command: an offline
// core opens no SSH session, so there would be nothing to read.
import { callRunningConsole, runningBridge } from '../bridge-client.js';
import { resolveDataDir } from '../options.js';
import { EXIT, shown, type Output } from '../output.js';
import { LogsFollowRun } from './logs-follow.js';
import { DEFAULT_FOLLOW_LINES, DEFAULT_TAIL_LINES, MAX_FOLLOW_LINES, MAX_TAIL_LINES, parseLogsArgs, type LogsArgs } from './logs-args.js';
import { entryPrinter, sourceNotes } from './logs-print.js';
import type { CliCommand } from './types.js';

/** A tail waits for the console's own deadline on the host (20 s) and a little more. */
const TAIL_TIMEOUT_MS = 30_000;

async function tail(dataDir: string, args: LogsArgs, output: Output): Promise<number> {
  const { label, serviceId, lines, sinceMs, filter } = args;
  const result = await callRunningConsole(
    dataDir,
    'logs.tail',
    { label, serviceId, lines, ...(sinceMs !== undefined ? { sinceMs } : {}), ...(filter ? { filter } : {}) },
    { timeoutMs: TAIL_TIMEOUT_MS },
  );
  sourceNotes(output, result.source, args);
  const print = entryPrinter(output, args);
  for (const entry of result.entries) print(entry);
  if (!args.json && result.entries.length === 0) {
    output.err(filter ? `[no line of the last ${result.scanned} matched]` : `[${shown(result.source.description)}: no lines]`);
  }
  return EXIT.OK;
}

const logs: CliCommand = {
  name: 'logs',
  help: `  logs HOST/SERVICE [--tail N] [--since T] [-f|--follow] [--grep TEXT [--regex] [-i]] [--timestamps]
                        A service's log, read by the running console over SSH, secrets masked. Lines on
                        stdout; drops, gaps, a lost link, rotation, cut lines and recognised failures on
                        stderr as [bracketed] lines. --tail: the last N lines (default ${DEFAULT_TAIL_LINES}, at most
                        ${MAX_TAIL_LINES}; with --follow the lines before now, default ${DEFAULT_FOLLOW_LINES}, 0-${MAX_FOLLOW_LINES}). --since 10m | 2h |
                        2026-12-05T01:30:00Z (sources with timestamps). --grep: lines holding TEXT
                        (--regex: a JavaScript regular expression; -i: any case). --timestamps: the
                        source's own time before each line that has one. --follow: new lines as they come,
                        until Ctrl-C (exit 0). --json: one entry (line or marker) per line.
`,
  async run(args, output) {
    const parsed = parseLogsArgs(args, Date.now());
    const dataDir = resolveDataDir(parsed.dataDir);
    // Said before anything else: with no console there are no SSH sessions to read the log over.
    runningBridge(dataDir, ': the logs are read over its SSH sessions');
    return parsed.follow ? new LogsFollowRun(dataDir, parsed, output).run() : tail(dataDir, parsed, output);
  },
};

export const logsCommands: CliCommand[] = [logs];
