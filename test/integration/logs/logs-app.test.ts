// The logs channels through the running core (contract dispatcher → LogsService
// → FleetService.execStream → the host's SSH session → a real sshd → tail):
// what the Logs view and the CLI call. The service's configured API key is
// masked although no pattern would find it, failure lines are marked, and a
// follow delivers appended lines as logs.batch events until it is stopped.
import { appendFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LogEntry, LogsTailResult } from '../../../src-preload/contract/index.js';
import { startTestApp, type TestApp } from '../../helpers/app.js';
import { until } from '../../helpers/until.js';
import { HAVE_SSH_PARTS, loopbackWorld, type LoopbackWorld } from './sessions.js';

const KEY = 'plain-words-no-pattern-finds-7731';

describe.skipIf(!HAVE_SSH_PARTS)('logs through the console (real sshd, both transports)', () => {
  let world: LoopbackWorld;
  beforeAll(async () => {
    world = await loopbackWorld();
  }, 30_000);
  afterAll(async () => {
    await world?.dispose();
  });

  for (const transport of ['builtin', 'openssh'] as const) {
    it(`${transport}: logs.tail and logs.follow on a file source`, async () => {
      const dataDir = join(world.dir, `data-${transport}`);
      const log = join(world.dir, `server-${transport}.log`);
      writeFileSync(log, ['INFO starting', `INFO weights ${KEY} loaded`, 'torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB', ''].join('\n'));
      const configFile = join(world.dir, `config-${transport}.yaml`);
      writeFileSync(
        configFile,
        [
          'hosts:',
          '  - label: gpu-a',
          `    ssh: { host: 127.0.0.1, port: ${world.sshd.port}, user: root, identityFile: ${join(world.dir, 'id')}, transport: ${transport}, keepaliveIntervalMs: 1000 }`,
          `    knownHostsFile: ${join(world.dir, 'known_hosts')}`,
          '    services:',
          `      - { id: m, kind: vllm, remotePort: 8000, model: test-model, logs: { file: ${log} } }`,
          'proxy:',
          '  upstreams:',
          '    gpu-a/m: { apiKeyRef: upstream.gpu-a.m }',
          '',
        ].join('\n'),
      );
      let t: TestApp | null = null;
      try {
        t = await startTestApp({ dataDir, configFile, pollIntervalMs: 250 });
        await t.app.secrets.set('upstream.gpu-a.m', KEY);
        await until(() => t!.app.fleet.state().hosts.find((h) => h.label === 'gpu-a')?.session.state === 'connected', { timeoutMs: 15_000, what: 'gpu-a connected' });

        const tail = await t.call<LogsTailResult>('logs.tail', { label: 'gpu-a', serviceId: 'm', lines: 50 });
        const lines = tail.entries.filter((e): e is Extract<LogEntry, { type: 'line' }> => e.type === 'line');
        expect(lines.map((l) => l.text)).toEqual(['INFO starting', expect.stringContaining('INFO weights '), expect.stringContaining('CUDA out of memory')]);
        expect(JSON.stringify(tail)).not.toContain(KEY);
        expect(lines[2]!.failure).toBe('cuda-oom');
        expect(lines.every((l) => l.ts === null)).toBe(true); // a file has no timestamps: never the arrival time

        const seen: LogEntry[] = [];
        const sub = t.api.onEvent((e) => {
          if (e.channel === 'logs.batch') seen.push(...(e.payload as { entries: LogEntry[] }).entries);
        });
        const follow = await t.call<{ followId: string; source: { kind: string } }>('logs.follow', { label: 'gpu-a', serviceId: 'm', lines: 0 });
        expect(follow.source.kind).toBe('file');
        await new Promise((r) => setTimeout(r, 500)); // tail -F is running before the append
        appendFileSync(log, `after 1\nNCCL error: unhandled system error ${KEY}\n`);
        await until(() => seen.some((e) => e.type === 'line' && e.text.startsWith('NCCL error')), { timeoutMs: 10_000, what: 'the appended lines as logs.batch' });
        const followed = seen.filter((e): e is Extract<LogEntry, { type: 'line' }> => e.type === 'line');
        expect(followed.map((l) => l.text.slice(0, 10))).toEqual(['after 1', 'NCCL error']);
        expect(followed[1]!.failure).toBe('nccl-error');
        expect(JSON.stringify(seen)).not.toContain(KEY);
        const stopped = await t.call<{ followId: string; ended: boolean }>('logs.unfollow', { followId: follow.followId });
        expect(stopped).toEqual({ followId: follow.followId, ended: true });
        sub.dispose();
      } finally {
        await t?.dispose();
      }
    }, 60_000);
  }
});
