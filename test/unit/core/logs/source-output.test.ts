import { describe, expect, it } from 'vitest';
import { parseStderr, parseStdout, sourceProblem } from '../../../../src-main/core/logs/source-output.js';
import type { LogSource } from '../../../../src-main/core/logs/index.js';

const raw = (s: string | Buffer) => ({ bytes: Buffer.isBuffer(s) ? s : Buffer.from(s), cutBytes: 0 });

describe("journalctl's JSON lines", () => {
  it("give the message, the source's own time and the cursor to resume from", () => {
    const line = JSON.stringify({ __CURSOR: 's=1;i=2a', __REALTIME_TIMESTAMP: '1796433124070014', MESSAGE: 'main: model loaded', _PID: '42' });
    expect(parseStdout('journal', raw(line), 1024)).toEqual([{ ts: 1796433124070, text: 'main: model loaded', stream: 'stdout', cutBytes: 0, binary: false, cursor: 's=1;i=2a' }]);
  });

  it('a message journald kept as bytes (not UTF-8) is decoded with replacement characters, or marked binary', () => {
    const bytes = [...Buffer.from('loading '), 0xff, ...Buffer.from(' weights from disk now')];
    const [r] = parseStdout('journal', raw(JSON.stringify({ __CURSOR: 'c', __REALTIME_TIMESTAMP: '1000', MESSAGE: bytes })), 1024);
    expect(r).toMatchObject({ text: 'loading \uFFFD weights from disk now', binary: false });
    const garbage = Array.from({ length: 64 }, (_, i) => (i * 53) % 256);
    expect(parseStdout('journal', raw(JSON.stringify({ __CURSOR: 'c', MESSAGE: garbage })), 1024)[0]).toMatchObject({ binary: true });
  });

  it('a multi-line message is several lines, the cursor on the last; a long one is cut and says by how much', () => {
    const recs = parseStdout('journal', raw(JSON.stringify({ __CURSOR: 'c9', __REALTIME_TIMESTAMP: '5000', MESSAGE: `Traceback (most recent call last):\n  File "x.py"\n${'z'.repeat(3000)}` })), 1024);
    expect(recs.map((r) => r.cursor)).toEqual([undefined, undefined, 'c9']);
    expect(recs[2]).toMatchObject({ cutBytes: 3000 - 1024 });
    expect(recs[2]!.text).toHaveLength(1024);
  });

  it('an entry too large to hold whole keeps its cursor and says its size', () => {
    const [r] = parseStdout('journal', { bytes: Buffer.from('{"__CURSOR":"s=9;i=ff","__REALTIME_TIMESTAMP":"2000000","MESSAGE":"xxxx'), cutBytes: 3_000_000 }, 1024);
    expect(r).toMatchObject({ cursor: 's=9;i=ff', ts: 2000, text: expect.stringMatching(/journal entry of \d+ bytes: too large to show/) });
  });
});

describe('docker and compose lines', () => {
  it("carry docker's RFC 3339 timestamp (kept as text for --since) and the line after it", () => {
    expect(parseStdout('compose', raw('2026-12-05T08:15:33.123456789Z (APIServer pid=1) INFO:     Application startup complete.'), 1024)[0]).toEqual({
      ts: Date.parse('2026-12-05T08:15:33.123Z'), rawTs: '2026-12-05T08:15:33.123456789Z', text: '(APIServer pid=1) INFO:     Application startup complete.', stream: 'stdout', cutBytes: 0, binary: false,
    });
    // The container's stderr is log too; docker's own complaint has no timestamp.
    expect(parseStderr('docker', raw('2026-12-05T08:15:34.000000001Z Traceback (most recent call last):'))).toMatchObject({ stream: 'stderr', rawTs: '2026-12-05T08:15:34.000000001Z' });
    expect(parseStderr('docker', raw('Error response from daemon: No such container: vllm'))).toMatchObject({ ts: null });
  });
});

describe("tail -F's notices", () => {
  it.each([
    ["tail: 'https://no.example' has been replaced;  following new file", 'file-rotated'],
    ["tail: '/var/log/vllm.log' has appeared;  following new file", 'file-rotated'],
    ['tail: /var/log/vllm.log: file truncated', 'file-truncated'],
    ["tail: '/var/log/vllm.log' has become inaccessible: No such file or directory", 'file-missing'],
  ])('%s → %s', (line, notice) => {
    expect(parseStderr('file', raw(line))).toMatchObject({ notice });
  });
});

describe('what a source says is wrong becomes a coded error naming the fix', () => {
  const journal: LogSource = { kind: 'journal', unit: 'llama-server.service', user: false };
  const docker: LogSource = { kind: 'docker', container: 'vllm', sudo: false };
  const file: LogSource = { kind: 'file', path: '/var/log/vllm.log' };

  it('journalctl without the systemd-journal group', () => {
    const e = sourceProblem(journal, "Hint: You are currently not seeing messages from other users and the system.\n      Users in groups 'adm', 'systemd-journal' can see all messages.", null, 'ops');
    expect(e).toMatchObject({ code: 'LOGS_NOT_PERMITTED', details: { group: 'systemd-journal' } });
    expect(e!.message).toContain('usermod -aG systemd-journal ops');
  });

  it('docker without the docker group; a container that is not there; no compose plugin', () => {
    const e = sourceProblem(docker, 'permission denied while trying to connect to the Docker daemon socket at unix:///var/run/docker.sock: Get "http://%2Fvar%2Frun%2Fdocker.sock/v1.24/containers/vllm/json": dial unix /var/run/docker.sock: connect: permission denied', 1, 'ops');
    expect(e).toMatchObject({ code: 'LOGS_NOT_PERMITTED', details: { group: 'docker' } });
    expect(e!.message).toContain('usermod -aG docker ops');
    expect(sourceProblem(docker, 'Error response from daemon: No such container: vllm', 1, 'ops')).toMatchObject({ code: 'LOGS_SOURCE_MISSING' });
    expect(sourceProblem({ kind: 'compose', service: 'vllm', files: [], project: null, projectDirectory: null, sudo: false }, "docker: 'compose' is not a docker command.", 1, 'ops')).toMatchObject({ code: 'LOGS_TOOL_MISSING' });
  });

  it('a file that is not there (a tail fails; a follow waits for it), or not readable; a tool not installed', () => {
    const missing = "tail: cannot open '/var/log/vllm.log' for reading: No such file or directory";
    expect(sourceProblem(file, missing, 1, 'ops')).toMatchObject({ code: 'LOGS_SOURCE_MISSING' });
    expect(sourceProblem(file, missing, null, 'ops', true)).toBeNull();
    expect(sourceProblem(file, "tail: cannot open '/var/log/vllm.log' for reading: Permission denied", 1, 'ops')).toMatchObject({ code: 'LOGS_NOT_PERMITTED' });
    expect(sourceProblem(journal, 'sh: 1: journalctl: not found', 127, 'ops')).toMatchObject({ code: 'LOGS_TOOL_MISSING' });
    expect(sourceProblem({ ...docker, sudo: true }, 'sudo: a password is required', 1, 'ops')).toMatchObject({ code: 'LOGS_NOT_PERMITTED' });
  });
});
