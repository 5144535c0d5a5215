import { describe, expect, it } from 'vitest';
import { SseParser, type SseMessage } from '../../../src-renderer/src/transport/sse-parser.js';

const STREAM =
  ': hello comment\n\n' +
  'event: fleet.tick\ndata: {"at":1,"hosts":[]}\n\n' +
  'event: host.status\r\ndata: {"label":"l20-poc",\r\ndata: "state":"connected"}\r\n\r\n' +
  ':keepalive\n' +
  'event: config.changed\rdata:{"ok":true}\r\r' +
  'data: né — ✓\n\n';

const EXPECTED: Array<Pick<SseMessage, 'event' | 'data'>> = [
  { event: 'fleet.tick', data: '{"at":1,"hosts":[]}' },
  { event: 'host.status', data: '{"label":"l20-poc",\n"state":"connected"}' },
  { event: 'config.changed', data: '{"ok":true}' },
  { event: 'message', data: 'né — ✓' },
];

function feed(chunks: string[]): Array<Pick<SseMessage, 'event' | 'data'>> {
  const parser = new SseParser();
  return chunks.flatMap((chunk) => parser.push(chunk)).map(({ event, data }) => ({ event, data }));
}

describe('SseParser', () => {
  it('parses events, joins multi-line data and ignores comments', () => {
    expect(feed([STREAM])).toEqual(EXPECTED);
  });

  it('gives the same messages whichever single position splits the stream', () => {
    for (let i = 0; i <= STREAM.length; i++) {
      expect(feed([STREAM.slice(0, i), STREAM.slice(i)]), `split at ${i}`).toEqual(EXPECTED);
    }
  });

  it('gives the same messages when every character arrives alone', () => {
    expect(feed([...STREAM])).toEqual(EXPECTED);
  });

  it('gives the same messages for arbitrary three-way splits', () => {
    for (let i = 0; i <= STREAM.length; i += 3) {
      for (let j = i; j <= STREAM.length; j += 5) {
        expect(feed([STREAM.slice(0, i), STREAM.slice(i, j), STREAM.slice(j)]), `split at ${i},${j}`).toEqual(EXPECTED);
      }
    }
  });

  it('survives multi-byte characters split across byte chunks (with a streaming decoder)', () => {
    const bytes = new TextEncoder().encode(STREAM);
    for (let i = 0; i <= bytes.length; i++) {
      const decoder = new TextDecoder();
      const parser = new SseParser();
      const out = [
        ...parser.push(decoder.decode(bytes.slice(0, i), { stream: true })),
        ...parser.push(decoder.decode(bytes.slice(i), { stream: true })),
      ].map(({ event, data }) => ({ event, data }));
      expect(out, `byte split at ${i}`).toEqual(EXPECTED);
    }
  });

  it('does not dispatch an event without data, nor a message still open at the end', () => {
    expect(feed(['event: fleet.tick\n\n', 'event: x\ndata: 1\n'])).toEqual([]);
  });

  it('strips exactly one space after the colon and keeps empty data lines', () => {
    expect(feed(['data:  two spaces\ndata\ndata: \n\n'])).toEqual([{ event: 'message', data: ' two spaces\n\n' }]);
  });

  it('reads retry and id fields, ignores unknown fields, and forgets a partial message on reset', () => {
    const parser = new SseParser();
    expect(parser.push('retry: 2500\nid: 7\nfoo: bar\ndata: a\n\n')).toEqual([{ event: 'message', data: 'a', id: '7' }]);
    expect(parser.retry).toBe(2500);
    parser.push('event: fleet.tick\ndata: half');
    parser.reset();
    expect(parser.push('\n\ndata: b\n\n').map((m) => m.data)).toEqual(['b']);
  });
});
