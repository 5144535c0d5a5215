import { connect } from 'node:net';
import { Duplex } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { LocalForward } from '../../../../src-main/core/ssh/index.js';

// A stream whose channel finished (the model server answered and ended) leaves
// the client's keep-alive connection half-open. close() must not wait for the
// client to hang up (it waited for ever: the console's shutdown hung).
function answeringChannel(): Duplex {
  const ch = new Duplex({
    read() {},
    write(_chunk, _enc, cb) {
      ch.push('HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok');
      ch.push(null);
      cb();
      // Like an ssh2 channel once the remote side closed: 'end', then 'close'.
      ch.once('end', () => setImmediate(() => ch.destroy()));
    },
  });
  return ch;
}

describe('LocalForward.close', () => {
  it('returns at once even when a client keeps an answered connection open', async () => {
    const forward = await LocalForward.open({ forwardOut: async () => answeringChannel() }, { remoteHost: '127.0.0.1', remotePort: 8000 });
    const client = connect(forward.localPort, '127.0.0.1');
    const answer = await new Promise<string>((resolve, reject) => {
      let text = '';
      client.on('data', (d: Buffer) => {
        text += d.toString();
        if (text.endsWith('ok')) resolve(text);
      });
      client.on('error', reject);
      client.write('GET / HTTP/1.1\r\nhost: x\r\n\r\n');
    });
    expect(answer).toContain('200 OK');
    // The client does not end its side (like an idle keep-alive socket).
    const started = Date.now();
    await forward.close();
    expect(Date.now() - started).toBeLessThan(1000);
    expect(forward.listening).toBe(false);
    client.destroy();
  });
});
