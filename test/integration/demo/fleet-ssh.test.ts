import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import ssh2 from 'ssh2';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { validateConfig } from '../../../src-main/core/config/index.js';
import { startDemoFleet, type DemoFleet } from '../../../src-main/demo/index.js';
import { GPU_DETECT_COMMAND } from '../../../src-main/core/telemetry/index.js';
import { connectSsh, exec, fingerprint, forward, knownHostFingerprint } from './demo-client.js';
import { generateEd25519 } from '../../../src-main/demo/keys.js';

let dir: string;
let fleet: DemoFleet;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'demo-ssh-'));
  fleet = await startDemoFleet({ dir, timeScale: 1000, decodeSpeedFactor: 20 });
});

afterAll(async () => {
  await fleet?.dispose();
  rmSync(dir, { recursive: true, force: true });
});

describe('demo fleet files and config', () => {
  it('produces exactly the console config shape for the three hosts', () => {
    expect(fleet.config.hosts.map((h) => h.label)).toEqual(['l20-poc', 'tri-gpu', 'strix']);
    expect(fleet.config.budget).toEqual({ monthlyUsd: 4000 });
    const l20 = fleet.config.hosts[0]!;
    expect(Object.keys(l20).sort()).toEqual(['gpu', 'knownHostsFile', 'label', 'monthlyBudgetUsd', 'pricePerHourUsd', 'services', 'ssh', 'tags']);
    expect(l20).toEqual({
      label: 'l20-poc',
      ssh: { host: '127.0.0.1', port: fleet.host('l20-poc').sshPort, user: 'ops', identityFile: fleet.clientKeyFile },
      knownHostsFile: fleet.knownHostsFile,
      gpu: { model: 'NVIDIA L20', count: 1 },
      pricePerHourUsd: 2.641736,
      // The proof of concept's monthly gate (field notes §1).
      monthlyBudgetUsd: 500,
      tags: { site: 'kl', env: 'poc' },
      services: [
        { id: 'qwen', kind: 'vllm', remotePort: 8000, model: 'Qwen3.6-27B-FP8', aliases: ['qwen'], slots: 4, restartCommand: 'docker compose -f /srv/vllm/compose.yaml restart vllm', logs: { compose: { service: 'vllm', files: ['/srv/vllm/compose.yaml'] } } },
      ],
    });
    const tri = fleet.config.hosts[1]!;
    expect(tri.gpu).toEqual({ model: 'NVIDIA L40S', count: 3 });
    expect(tri.services.map((s) => [s.id, s.remotePort, s.model])).toEqual([
      ['gemma', 8000, 'Gemma-3-27B-it'],
      ['ocr', 8001, 'olmOCR-2-7B'],
      ['embed', 8002, 'bge-m3'],
      ['sgl', 30000, 'Qwen2.5-3B-Instruct'],
      ['tei', 8090, 'bge-small-en-v1.5'],
    ]);
    expect(tri.services.map((s) => s.kind)).toEqual(['vllm', 'vllm', 'vllm', 'sglang', 'tei']);
    for (const s of tri.services) expect(Object.keys(s).sort()).toEqual(['aliases', 'id', 'kind', 'logs', 'model', 'remotePort', 'restartCommand', 'slots']);
    expect(tri.services.map((s) => s.logs)).toEqual([
      { journal: 'vllm-gemma.service' },
      { journal: 'vllm-ocr.service' },
      { journal: 'vllm-embed.service' },
      { journal: 'sglang-qwen.service' },
      { journal: 'text-embeddings.service' },
    ]);
    const strix = fleet.config.hosts[2]!;
    expect(strix).toEqual({
      label: 'strix',
      ssh: { host: '127.0.0.1', port: fleet.host('strix').sshPort, user: 'ops', identityFile: fleet.clientKeyFile },
      knownHostsFile: fleet.knownHostsFile,
      gpu: { model: 'AMD Radeon 8060S', count: 1 },
      pricePerHourUsd: 0.32,
      tags: { site: 'desk', env: 'dev' },
      services: [
        {
          id: 'coder',
          kind: 'llama-server',
          remotePort: 8080,
          model: 'Qwen3-Coder-30B-A3B',
          aliases: ['coder'],
          slots: 2,
          restartCommand: 'sudo systemctl restart llama-server.service',
          logs: { journal: 'llama-server.service' },
        },
      ],
    });
  });

  it('is a config the console schema accepts', () => {
    const config = validateConfig({ hosts: fleet.config.hosts }, { home: dir });
    expect(config.hosts.flatMap((h) => h.services.map((s) => `${h.label}/${s.id}:${s.kind}:${s.slots}`))).toEqual([
      'l20-poc/qwen:vllm:4',
      'tri-gpu/gemma:vllm:8',
      'tri-gpu/ocr:vllm:4',
      'tri-gpu/embed:vllm:16',
      'tri-gpu/sgl:sglang:8',
      'tri-gpu/tei:tei:32',
      'strix/coder:llama-server:2',
    ]);
  });

  it('writes a 0600 OpenSSH client key and a known_hosts line per host', () => {
    expect(statSync(fleet.clientKeyFile).mode & 0o777).toBe(0o600);
    expect(readFileSync(fleet.clientKeyFile, 'utf8')).toContain('BEGIN OPENSSH PRIVATE KEY');
    const lines = readFileSync(fleet.knownHostsFile, 'utf8').trim().split('\n');
    expect(lines).toHaveLength(3);
    for (const h of fleet.hosts) {
      expect(lines.some((l) => new RegExp(`^\\[127\\.0\\.0\\.1\\]:${h.sshPort} ssh-ed25519 AAAA\\S+$`).test(l))).toBe(true);
      expect(knownHostFingerprint(fleet.knownHostsFile, h.sshPort)).toBe(h.hostKeyFingerprint);
      expect(h.hostKeyFingerprint).toMatch(/^SHA256:[A-Za-z0-9+/]{43}$/);
    }
    expect(new Set(fleet.hosts.map((h) => h.hostKeyFingerprint)).size).toBe(3);
  });

  it('names unknown hosts and services with coded errors', () => {
    expect(() => fleet.host('nope')).toThrow(expect.objectContaining({ code: 'DEMO_UNKNOWN_HOST' }));
    expect(() => fleet.host('l20-poc').simulator('nope')).toThrow(expect.objectContaining({ code: 'DEMO_UNKNOWN_SERVICE' }));
    // Each accessor gives its own engine only.
    expect(() => fleet.host('strix').simulator('coder')).toThrow(expect.objectContaining({ code: 'DEMO_UNKNOWN_SERVICE' }));
    expect(() => fleet.host('l20-poc').llamaServer('qwen')).toThrow(expect.objectContaining({ code: 'DEMO_UNKNOWN_SERVICE' }));
    expect(fleet.host('strix').llamaServer('coder').profile.alias).toBe('Qwen3-Coder-30B-A3B');
    expect(fleet.host('strix').gpus()).toEqual([]);
    expect(fleet.host('strix').amdGpus().map((g) => g.name)).toEqual(['AMD Radeon 8060S']);
    expect(fleet.host('tri-gpu').amdGpus()).toEqual([]);
  });
});

describe('demo SSH authentication', () => {
  it('accepts user ops with the fleet client key, host verified against known_hosts', async () => {
    const client = await connectSsh(fleet, fleet.host('l20-poc'));
    expect(await exec(client, 'hostname')).toEqual({ stdout: 'l20-poc\n', stderr: '', code: 0 });
    client.end();
  });

  it('rejects another key, another user and passwords', async () => {
    const other = generateEd25519('test').pair.private;
    const host = fleet.host('l20-poc');
    await expect(connectSsh(fleet, host, { privateKey: other })).rejects.toThrow(/authentication methods failed/);
    await expect(connectSsh(fleet, host, { username: 'root' })).rejects.toThrow(/authentication methods failed/);
    await expect(connectSsh(fleet, host, { password: 'ops' })).rejects.toThrow(/authentication methods failed/);
  });

  it('presents a host key that a verifier for another host refuses', async () => {
    const tri = fleet.host('tri-gpu');
    const l20 = fleet.host('l20-poc');
    await expect(
      new Promise((resolve, reject) => {
        // A verifier that expects l20-poc's key, pointed at tri-gpu's server, must fail the handshake.
        const client = new ssh2.Client();
        client.once('ready', () => {
          client.end();
          resolve('ready');
        });
        client.once('error', reject);
        client.connect({
          host: '127.0.0.1',
          port: tri.sshPort,
          username: 'ops',
          privateKey: readFileSync(fleet.clientKeyFile),
          hostVerifier: (key: Buffer) => fingerprint(key) === knownHostFingerprint(fleet.knownHostsFile, l20.sshPort),
        });
      }),
    ).rejects.toThrow(/verification failed/i);
  });
});

describe('demo SSH exec and forwarding', () => {
  it('answers nvidia-smi with fields in a custom order, one row per GPU', async () => {
    const client = await connectSsh(fleet, fleet.host('tri-gpu'));
    const r = await exec(client, 'nvidia-smi --query-gpu=memory.used,index,name,uuid,power.draw,temperature.gpu --format=csv,noheader,nounits');
    expect(r.code).toBe(0);
    const rows = r.stdout.trim().split('\n').map((l) => l.split(', '));
    expect(rows).toHaveLength(3);
    expect(rows.map((row) => row[1])).toEqual(['0', '1', '2']);
    for (const row of rows) {
      expect(row[2]).toBe('NVIDIA L40S');
      expect(Number(row[0])).toBeGreaterThan(20_000); // every GPU holds a model
      expect(row[3]).toMatch(/^GPU-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
      expect(Number(row[4])).toBeGreaterThan(50);
    }
    const header = await exec(client, 'nvidia-smi --query-gpu=index,memory.used --format=csv');
    expect(header.stdout.split('\n')[0]).toBe('index, memory.used [MiB]');
    const bad = await exec(client, 'nvidia-smi --query-gpu=index,bogus.field --format=csv');
    expect(bad.code).toBe(2);
    expect(bad.stdout).toContain('Field "bogus.field" is not a valid field to query.');
    client.end();
  });

  it('lists compute apps per (process, GPU): gemma on GPU0+1 (TP2), ocr, embed, sgl and tei on GPU2', async () => {
    const client = await connectSsh(fleet, fleet.host('tri-gpu'));
    const uuids = (await exec(client, 'nvidia-smi --query-gpu=uuid --format=csv,noheader')).stdout.trim().split('\n');
    const r = await exec(client, 'nvidia-smi --query-compute-apps=gpu_uuid,pid,process_name,used_memory --format=csv,noheader,nounits');
    const rows = r.stdout.trim().split('\n').map((l) => l.split(', '));
    expect(rows.map((row) => uuids.indexOf(row[0]!))).toEqual([0, 1, 2, 2, 2, 2]);
    // The demo's SGLang and TEI servers run the simulated vLLM engine: their processes carry its names.
    expect(rows.map((row) => row[2])).toEqual(['VLLM::Worker_TP0', 'VLLM::Worker_TP1', 'VLLM::EngineCore', 'VLLM::EngineCore', 'VLLM::EngineCore', 'VLLM::EngineCore']);
    expect(new Set(rows.map((row) => row[1])).size).toBe(6);
    const again = await exec(client, 'nvidia-smi --query-compute-apps=pid --format=csv,noheader');
    expect(again.stdout.trim().split('\n')).toEqual(rows.map((row) => row[1])); // pids are stable
    client.end();
  });

  it('answers the console GPU detection per host: nvidia-smi on the NVIDIA hosts, the amdgpu card on strix', async () => {
    for (const [label, expected] of [
      ['l20-poc', 'tool nvidia-smi\n'],
      ['tri-gpu', 'tool nvidia-smi\n'],
      ['strix', 'sysfs /sys/class/drm/card1/device\n'],
    ] as const) {
      const client = await connectSsh(fleet, fleet.host(label));
      expect(await exec(client, GPU_DETECT_COMMAND), label).toEqual({ stdout: expected, stderr: '', code: 0 });
      client.end();
    }
  });

  it('answers the NvidiaSmiSource compound query (&&) on tri-gpu', async () => {
    const client = await connectSsh(fleet, fleet.host('tri-gpu'));
    const r = await exec(
      client,
      'nvidia-smi --query-gpu=index,uuid,name,memory.used --format=csv,noheader,nounits && echo __GPU_CONSOLE_COMPUTE_APPS__ && nvidia-smi --query-compute-apps=gpu_uuid,pid,process_name,used_memory --format=csv,noheader,nounits',
    );
    expect(r.code).toBe(0);
    const [gpus, apps] = r.stdout.split('__GPU_CONSOLE_COMPUTE_APPS__\n');
    expect(gpus!.trim().split('\n')).toHaveLength(3);
    expect(apps!.trim().split('\n')).toHaveLength(6);
    client.end();
  });

  it('refuses unknown commands and shell syntax like bash', async () => {
    const client = await connectSsh(fleet, fleet.host('l20-poc'));
    expect(await exec(client, 'ls /')).toEqual({ stdout: '', stderr: 'bash: ls: command not found\n', code: 127 });
    expect((await exec(client, 'nvidia-smi | head -1')).code).toBe(2);
    client.end();
  });

  it('forwards only to service ports on loopback', async () => {
    const client = await connectSsh(fleet, fleet.host('l20-poc'));
    await expect(forward(client, 9999)).rejects.toThrow(/Channel open failure/i);
    await expect(forward(client, 8001)).rejects.toThrow(); // 8001 is a tri-gpu port, not l20's
    const viaOtherIp = new Promise((resolve, reject) =>
      client.forwardOut('127.0.0.1', 0, '10.0.0.5', 8000, (err, stream) => (err ? reject(err) : resolve(stream))),
    );
    await expect(viaOtherIp).rejects.toThrow();
    const ok = await forward(client, 8000);
    ok.destroy();
    client.end();
  });
});

describe('demo fleet lifetime', () => {
  it('keeps fingerprints across restarts in the same folder and closes everything on dispose', async () => {
    const dir2 = mkdtempSync(join(tmpdir(), 'demo-ssh2-'));
    try {
      const a = await startDemoFleet({ dir: dir2, timeScale: 1000 });
      const prints = a.hosts.map((h) => h.hostKeyFingerprint);
      const clientKey = readFileSync(a.clientKeyFile, 'utf8');
      const client = await connectSsh(a, a.host('l20-poc'));
      const closed = new Promise<void>((resolve) => client.once('close', () => resolve()));
      const sims = a.hosts.flatMap((h) =>
        a.config.hosts.find((c) => c.label === h.label)!.services.map((s) => (s.kind === 'llama-server' ? h.llamaServer(s.id) : h.simulator(s.id))),
      );
      await a.dispose();
      await a.dispose(); // idempotent
      await closed; // the server ended the live session
      for (const sim of sims) expect(sim.listening).toBe(false);
      await expect(connectSsh(a, a.host('l20-poc'))).rejects.toThrow(/ECONNREFUSED/);

      const b = await startDemoFleet({ dir: dir2, timeScale: 1000 });
      expect(b.hosts.map((h) => h.hostKeyFingerprint)).toEqual(prints);
      expect(readFileSync(b.clientKeyFile, 'utf8')).toBe(clientKey);
      await b.dispose();
    } finally {
      rmSync(dir2, { recursive: true, force: true });
    }
  });
});
