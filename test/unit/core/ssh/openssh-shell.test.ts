import { rmSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { systemClock } from '../../../../src-main/core/base/index.js';
import { CappedBuffer } from '../../../../src-main/core/ssh/exec.js';
import { CommandShell, MarkedStream, shellLine } from '../../../../src-main/core/ssh/openssh-shell.js';

// The openssh transport's command shell on its own. In place of `ssh … alias`
// the "client" here is a local sh that runs what would be the remote command
// (`exec /bin/sh`), so the framing, the deadline and the fallbacks are tested
// without a network; the real thing through sshd is in
// test/integration/ssh/openssh-session.test.ts.

const MARK = 'GCSH0123456789abcdef01234567';

function streamOf(chunks: Buffer[], cap = 1 << 20): { text: string; ended: string | null; truncated: boolean } {
  const out = new CappedBuffer(cap);
  const s = new MarkedStream(MARK, out);
  for (const c of chunks) s.push(c);
  return { text: out.text(), ended: s.ended, truncated: out.truncated };
}

describe('MarkedStream: the output of one command up to its end line', () => {
  it('finds the end line wherever the chunks split it, and keeps the output exact', () => {
    const cases = ['42', '42\n', '', '\n\n', `almost ${MARK.slice(0, 10)} but not`, 'x'.repeat(5000)];
    for (const output of cases) {
      const wire = Buffer.from(`${output}\n${MARK} 3\n`);
      for (let cut = 0; cut <= wire.length; cut++) {
        const r = streamOf([wire.subarray(0, cut), wire.subarray(cut)]);
        expect({ output, cut, text: r.text, ended: r.ended }).toEqual({ output, cut, text: output, ended: '3' });
      }
      // one byte at a time
      const bytes = [...wire].map((b) => Buffer.from([b]));
      expect(streamOf(bytes)).toMatchObject({ text: output, ended: '3' });
    }
  });

  it('caps the output but still finds the end line past the cap; bytes after it are not the command’s', () => {
    const r = streamOf([Buffer.from('y'.repeat(3000)), Buffer.from(`\n${MARK} 0\nlate output from a background job\n`)], 1000);
    expect(r).toEqual({ text: 'y'.repeat(1000), ended: '0', truncated: true });
  });

  it('an end line with another marker is output, not the end', () => {
    const r = streamOf([Buffer.from(`\nGCSHffffffffffffffffffffffff 0\nstill going`)]);
    expect(r.ended).toBeNull();
  });

  it('the line quotes the command for sh: quotes, $, backticks and newlines stay literal', () => {
    const line = shellLine(`echo 'it'"s" $HOME \`id\`\nexit 3`, MARK);
    expect(line.endsWith('\n')).toBe(true);
    expect(line).toContain(`-c 'echo '\\''it'\\''"s" $HOME \`id\`\nexit 3' </dev/null;`);
  });
});

describe('CommandShell', () => {
  const shells: CommandShell[] = [];
  afterEach(async () => {
    await Promise.all(shells.splice(0).map((s) => s.dispose()));
  });
  /** A shell whose "ssh" runs the remote command here: `sh -c '<script>' sh 'exec /bin/sh'`. */
  const make = (script = 'eval "$1"', startTimeoutMs?: number) => {
    const s = new CommandShell({ binary: '/bin/sh', args: ['-c', script, 'sh'], env: { ...process.env, SHELL: '/bin/sh' }, clock: systemClock, label: 'local', startTimeoutMs });
    shells.push(s);
    return s;
  };
  const ready = async (s: CommandShell) => {
    expect(s.available()).toBe(false); // the first ask starts it
    await expect.poll(() => s.state, { timeout: 5_000, interval: 10 }).toBe('ready');
    expect(s.available()).toBe(true);
  };

  it('runs commands one after another in the same shell: status, stdout, stderr, no stdin', async () => {
    const s = make();
    await ready(s);
    const a = await s.run('printf "%s" "$((6*7))"; echo oops >&2; exit 3');
    expect(a).toEqual({ exitCode: 3, signal: null, stdout: '42', stderr: 'oops\n', truncated: false });
    // Each command is a child of the one shell (the one-shot path would give a new parent each time).
    const p1 = await s.run('echo $PPID');
    const p2 = await s.run('echo $PPID');
    expect(p1.stdout).toBe(p2.stdout);
    // stdin is /dev/null: a command that reads it cannot eat the next command's line.
    expect((await s.run('cat; echo read-nothing')).stdout).toBe('read-nothing\n');
    // A command that changes directory or sets a variable changes nothing for the next one.
    await s.run('cd /; X=1; export X');
    expect((await s.run('echo "${X:-unset}"')).stdout).toBe('unset\n');
    const multi = await s.run("printf '%s\\n' 'it'\"'\"'s'\nprintf '%s\\n' second");
    expect(multi.stdout).toBe("it's\nsecond\n");
    // A NUL byte cannot be sent to a shell: refused, and the shell is still free.
    await expect(s.run('echo a\0b')).rejects.toMatchObject({ code: 'SSH_EXEC_FAILED', message: expect.stringContaining('NUL') });
    expect(s.state).toBe('ready');
  });

  it('caps output and says so, with the exit status kept', async () => {
    const s = make();
    await ready(s);
    const r = await s.run('head -c 300000 /dev/zero | tr "\\0" x; exit 4', { maxOutputBytes: 1000 });
    expect(r).toMatchObject({ exitCode: 4, truncated: true });
    expect(r.stdout).toBe('x'.repeat(1000));
  });

  it('a deadline or a cancel kills the shell; the next command starts a new one', async () => {
    const s = make();
    await ready(s);
    await expect(s.run('sleep 5', { timeoutMs: 200 })).rejects.toMatchObject({ code: 'SSH_EXEC_TIMEOUT' });
    expect(s.state).toBe('none');
    await ready(s);
    const ac = new AbortController();
    const p = s.run('sleep 5', { signal: ac.signal });
    setTimeout(() => ac.abort(), 50);
    await expect(p).rejects.toMatchObject({ code: 'SSH_CANCELLED' });
    await ready(s);
    expect((await s.run('echo back')).stdout).toBe('back\n');
  });

  it('a command that ends the shell fails as not finished, naming it; the shell starts again later', async () => {
    const s = make();
    await ready(s);
    await expect(s.run('kill -9 $PPID; sleep 1')).rejects.toMatchObject({ code: 'SSH_EXEC_FAILED', message: expect.stringContaining('the command shell ended') });
    expect(s.state).toBe('none');
    await ready(s);
  });

  it('a host that cannot keep a shell (the remote command fails, or never answers) is unsupported: it stays on one-shot', async () => {
    const refused = make('echo "This account is restricted: $1" >&2; exit 1');
    expect(refused.available()).toBe(false);
    await expect.poll(() => refused.state, { timeout: 5_000, interval: 10 }).toBe('unsupported');
    expect(refused.available()).toBe(false);
    const silent = make('sleep 30', 200);
    expect(silent.available()).toBe(false);
    await expect.poll(() => silent.state, { timeout: 5_000, interval: 10 }).toBe('unsupported');
    expect(silent.available()).toBe(false);
    await expect(silent.run('echo x')).rejects.toMatchObject({ code: 'SSH_EXEC_FAILED' });
  });

  it('a shell that would not start is tried again after a minute, then after two (a slow login, a full MaxSessions)', async () => {
    let shift = 0;
    const clock = { ...systemClock, now: () => Date.now() + shift };
    // The first two starts fail (the "remote" refuses), the third works.
    const flag = `/tmp/gc-shell-tries-${process.pid}`;
    const script = `n=$(cat ${flag} 2>/dev/null || echo 0); echo $((n+1)) > ${flag}; [ "$n" -ge 2 ] || exit 1; eval "$1"`;
    const s = new CommandShell({ binary: '/bin/sh', args: ['-c', script, 'sh'], env: { ...process.env, SHELL: '/bin/sh' }, clock, label: 'local' });
    shells.push(s);
    try {
      expect(s.available()).toBe(false);
      await expect.poll(() => s.state, { timeout: 5_000, interval: 10 }).toBe('unsupported');
      shift = 59_000;
      expect(s.available()).toBe(false);
      expect(s.state).toBe('unsupported'); // not yet tried again
      shift = 61_000;
      expect(s.available()).toBe(false); // tried again now: fails again
      await expect.poll(() => s.state, { timeout: 5_000, interval: 10 }).toBe('unsupported');
      shift = 61_000 + 119_000;
      expect(s.available()).toBe(false);
      expect(s.state).toBe('unsupported'); // the wait doubled
      shift = 61_000 + 121_000;
      s.available();
      await expect.poll(() => s.state, { timeout: 5_000, interval: 10 }).toBe('ready');
      expect((await s.run('echo up')).stdout).toBe('up\n');
    } finally {
      rmSync(flag, { force: true });
    }
  });

  it('dispose fails the command in flight with the reason given', async () => {
    const s = make();
    await ready(s);
    const failed = expect(s.run('sleep 5')).rejects.toMatchObject({ code: 'SSH_CANCELLED' });
    await s.dispose();
    await failed;
    expect(s.state).toBe('closed');
    expect(s.available()).toBe(false);
  });
});
