import { describe, expect, it } from 'vitest';
import type { LogEntry } from '../../../src-preload/contract/index.js';
import { SseParser } from '../../../src-main/cli/event-stream.js';
import { entryPrinter, sourceNotes } from '../../../src-main/cli/extra/logs-print.js';
import { createOutput } from '../../../src-main/cli/output.js';

// What `gpu-console logs` writes where: the log's text alone on stdout, the
// console's words about it on stderr; and the event stream it reads.

function capture(json: boolean) {
  const out: string[] = [];
  const err: string[] = [];
  const output = createOutput(json, { stdout: (s) => out.push(s), stderr: (s) => err.push(s) });
  return { output, out, err };
}

const TS = Date.parse('2026-12-05T01:02:03.456Z');
const line = (text: string, extra: Partial<Extract<LogEntry, { type: 'line' }>> = {}): LogEntry => ({ type: 'line', ts: TS, text, stream: 'stdout', failure: null, cutBytes: 0, binary: false, ...extra });
const marker: LogEntry = { type: 'marker', marker: 'dropped', text: 'dropped 12 lines: the view could not keep up', code: 'LOGS_LINES_DROPPED', count: 12, at: TS };

describe('entryPrinter', () => {
  it('puts lines on stdout, markers, cuts and failures on stderr', () => {
    const c = capture(false);
    const print = entryPrinter(c.output, { timestamps: false, json: false });
    print(line('INFO ready'));
    print(marker);
    print(line('torch.OutOfMemoryError: CUDA out of memory', { failure: 'cuda-oom', cutBytes: 2048 }));
    expect(c.out).toEqual(['INFO ready\n', 'torch.OutOfMemoryError: CUDA out of memory\n']);
    expect(c.err).toEqual(['[dropped 12 lines: the view could not keep up]\n', '[line cut: 2048 more bytes not shown]\n', '[failure: cuda-oom]\n']);
  });

  it('--timestamps: the source\'s own time where the line has one, nothing where it has none', () => {
    const c = capture(false);
    const print = entryPrinter(c.output, { timestamps: true, json: false });
    print(line('stamped'));
    print(line('bare', { ts: null }));
    expect(c.out).toEqual(['2026-12-05T01:02:03.456Z stamped\n', 'bare\n']);
  });

  it('shows control characters as escapes: a line cannot move the cursor or forge another line', () => {
    const c = capture(false);
    entryPrinter(c.output, { timestamps: false, json: false })(line('a\x1b[2Jb\tc\rd\ne'));
    expect(c.out).toEqual(['a\\x1b[2Jb\tc\\rd\\ne\n']);
  });

  it('--json: one contract entry per line on stdout, markers included, nothing on stderr', () => {
    const c = capture(true);
    const print = entryPrinter(c.output, { timestamps: false, json: true });
    print(line('x\u202ey', { failure: 'traceback' }));
    print(marker);
    expect(c.err).toEqual([]);
    expect(c.out).toHaveLength(2);
    expect(c.out[0]).not.toContain('\u202e');
    expect(c.out.map((s) => JSON.parse(s) as unknown)).toEqual([line('x\u202ey', { failure: 'traceback' }), marker]);
  });

  it('says once when --timestamps cannot be honoured', () => {
    const c = capture(false);
    sourceNotes(c.output, { kind: 'file', description: 'file /var/log/vllm.log', timestamps: false }, { timestamps: true, json: false });
    sourceNotes(c.output, { kind: 'journal', description: 'journal of vllm.service', timestamps: true }, { timestamps: true, json: false });
    sourceNotes(c.output, { kind: 'file', description: 'file /x', timestamps: false }, { timestamps: false, json: false });
    expect(c.err).toEqual(['[file /var/log/vllm.log has no timestamps: lines are printed without]\n']);
  });
});

describe('SseParser', () => {
  const bytes = (s: string) => new TextEncoder().encode(s);

  it('yields whole events whatever the chunking, skipping comments', () => {
    const text = ': connected\n\nevent: logs.batch\ndata: {"a":"é"}\n\n: keep-alive\n\nevent: logs.ended\ndata: {"b":1}\n\n';
    const all = bytes(text);
    for (const size of [1, 3, 7, all.length]) {
      const p = new SseParser();
      const frames = [];
      for (let i = 0; i < all.length; i += size) frames.push(...p.push(all.slice(i, i + size)));
      expect(frames).toEqual([
        { event: 'logs.batch', data: '{"a":"é"}' },
        { event: 'logs.ended', data: '{"b":1}' },
      ]);
    }
  });

  it('joins data lines and reads CRLF', () => {
    expect(new SseParser().push(bytes('event: x\r\ndata: 1\r\ndata: 2\r\n\r\n'))).toEqual([{ event: 'x', data: '1\n2' }]);
  });
});
