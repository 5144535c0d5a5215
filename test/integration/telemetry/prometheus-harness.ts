import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { request } from 'undici';

// A real Prometheus (Debian package `prometheus`) for tests: on 127.0.0.1 on a
// free port, its TSDB in a temp folder, scraping only the loopback targets it
// is given. Tests skip, saying why, when the binary is absent.

export interface PromTarget {
  job: string;
  /** host:port on 127.0.0.1. */
  target: string;
  labels?: Record<string, string>;
}

export interface RunningPrometheus {
  url: string;
  /** What it wrote to stderr (its log), for failure messages. */
  log(): string;
  stop(): Promise<void>;
}

export function which(binary: string): string | null {
  const r = spawnSync(binary, ['--version'], { encoding: 'utf8' });
  return r.status === 0 ? `${r.stdout}${r.stderr}`.split('\n')[0]!.trim() : null;
}

export async function freePort(): Promise<number> {
  const server: Server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** Starts Prometheus with a 1 s scrape interval over `targets` (YAML written as JSON, its subset). */
export async function startPrometheus(dir: string, targets: readonly PromTarget[], options: { readyTimeoutMs?: number } = {}): Promise<RunningPrometheus> {
  const jobs = new Map<string, PromTarget[]>();
  for (const t of targets) jobs.set(t.job, [...(jobs.get(t.job) ?? []), t]);
  const config = {
    global: { scrape_interval: '1s', scrape_timeout: '1s', evaluation_interval: '1s' },
    scrape_configs: [...jobs].map(([job, list]) => ({
      job_name: job,
      static_configs: list.map((t) => ({ targets: [t.target], labels: t.labels ?? {} })),
    })),
  };
  mkdirSync(dir, { recursive: true });
  const file = join(dir, 'prometheus.yml');
  writeFileSync(file, JSON.stringify(config, null, 2));
  const port = await freePort();
  const child: ChildProcess = spawn(
    'prometheus',
    [`--config.file=${file}`, `--storage.tsdb.path=${join(dir, 'tsdb')}`, `--web.listen-address=127.0.0.1:${port}`, '--log.level=warn'],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let log = '';
  child.stderr!.on('data', (c: Buffer) => (log = (log + c.toString('utf8')).slice(-20_000)));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const url = `http://127.0.0.1:${port}`;
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    await Promise.race([exited, new Promise((r) => setTimeout(r, 5_000))]);
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await exited;
  };
  const deadline = Date.now() + (options.readyTimeoutMs ?? 20_000);
  for (;;) {
    if (child.exitCode !== null) throw new Error(`prometheus exited ${child.exitCode}: ${log}`);
    try {
      const res = await request(`${url}/-/ready`, { headersTimeout: 1_000, bodyTimeout: 1_000 });
      await res.body.dump();
      if (res.statusCode === 200) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`prometheus was not ready within ${options.readyTimeoutMs ?? 20_000} ms: ${log}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return { url, log: () => log, stop };
}
