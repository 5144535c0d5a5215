import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDemoFleet, type DemoFleet } from '../../../src-main/demo/index.js';
import type { LogSink } from '../../../src-main/demo/log-stream.js';
import { classifyLine } from '../../../src-main/core/logs/index.js';

// The demo's log commands as a stream (issue #29 item 8): lines leave in the
// order the service wrote them even where they alternate between stdout and
// stderr (docker keeps a container's two streams apart), a follow writes new
// lines as they are logged and stops listening when stopped, and a sink that
// says "wait" is not written to until it drains.

let dir: string;
let fleet: DemoFleet;
const COMPOSE = 'docker compose -f /srv/vllm/compose.yaml logs --no-color --no-log-prefix --timestamps --tail=all -- vllm';

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'gc-log-stream-'));
  fleet = await startDemoFleet({ dir, timeScale: 1000 });
}, 30_000);
afterAll(async () => {
  await fleet?.dispose();
  rmSync(dir, { recursive: true, force: true });
});

function recorder(wait = false) {
  const writes: { fd: string; text: string }[] = [];
  const drains: (() => void)[] = [];
  let ended: number | null = null;
  const sink: LogSink = {
    write: (fd, text) => {
      writes.push({ fd, text });
      return !wait;
    },
    onDrain: (fn) => drains.push(fn),
    end: (code) => (ended = code),
  };
  return { sink, writes, drains, ended: () => ended, lines: () => writes.flatMap((w) => w.text.split('\n').filter(Boolean)) };
}

describe("the demo's log stream", () => {
  it('keeps the written order across stdout and stderr (docker --timestamps stamps never go back)', () => {
    const host = fleet.host('l20-poc');
    // Start-up lines are python logging (stderr); request lines are uvicorn's (stdout): interleave them.
    host.serviceLog('qwen').log.append([{ text: 'access 1', stream: 'stdout' }, { text: 'error 1', stream: 'stderr' }, { text: 'access 2', stream: 'stdout' }], 1);
    const r = recorder();
    host.stream(COMPOSE, r.sink);
    expect(r.ended()).toBe(0);
    expect(new Set(r.writes.map((w) => w.fd))).toEqual(new Set(['stdout', 'stderr']));
    const stamps = r.lines().map((l) => l.slice(0, 30));
    expect(stamps).toEqual([...stamps].sort());
    expect(r.lines().slice(-3).map((l) => l.slice(31))).toEqual(['access 1', 'error 1', 'access 2']);
  });

  it('a follow writes lines as they are logged, waits while the sink is full, and stops listening when stopped', async () => {
    const host = fleet.host('tri-gpu');
    const { log } = host.serviceLog('gemma');
    const r = recorder();
    const running = host.stream('journalctl --unit=vllm-gemma.service --output=json --lines=0 --follow', r.sink)!;
    expect(r.writes).toEqual([]);
    log.append([{ text: 'one' }, { text: 'two' }], 42);
    await Promise.resolve();
    expect(r.lines().map((l) => (JSON.parse(l) as { MESSAGE: string }).MESSAGE)).toEqual(['one', 'two']);
    expect(log.onDidAppend.listenerCount).toBe(1);
    running.stop();
    expect(log.onDidAppend.listenerCount).toBe(0);
    expect(r.ended()).toBe(0);

    const slow = recorder(true);
    const held = host.stream('tail -n 0 -F /var/log/vllm-gemma.log', slow.sink)!;
    log.append([{ text: 'a' }], 42);
    await Promise.resolve();
    log.append([{ text: 'b' }, { text: 'c' }], 42);
    await Promise.resolve();
    expect(slow.lines()).toEqual(['a']);
    slow.drains.forEach((d) => d());
    await Promise.resolve();
    expect(slow.lines()).toEqual(['a', 'b', 'c']);
    held.stop();
  });

  it("a restart that leaves a ghost on llama-server's port logs the new process's failed bind, marked by core's classifier as port-in-use", async () => {
    const host = fleet.host('strix');
    host.llamaServer('coder').ghostOnNextRestart();
    expect((await host.run('sudo systemctl restart llama-server.service')).code).toBe(0);
    const r = await host.run('journalctl --unit=llama-server.service --output=short-iso-precise --lines=4');
    const lines = r.stdout.trim().split('\n');
    expect(lines[1]).toMatch(/^\S+ strix llama-server\[\d+\]: main: couldn't bind HTTP server socket, hostname: 127\.0\.0\.1, port: 8080$/);
    expect(classifyLine(lines[1]!)).toBe('port-in-use');
    expect(lines.slice(2)).toEqual([expect.stringMatching(/systemd\[1\]: llama-server\.service: Main process exited, code=exited, status=1\/FAILURE$/), expect.stringMatching(/Failed with result 'exit-code'\.$/)]);
    host.llamaServer('coder').kill(host.llamaServer('coder').state().pid!);
  });
});
