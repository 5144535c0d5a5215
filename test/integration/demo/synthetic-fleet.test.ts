import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { validateConfig } from '../../../src-main/core/config/index.js';
import { startDemoFleet, syntheticProfiles, type DemoFleet } from '../../../src-main/demo/index.js';
import { GPU_DETECT_COMMAND, parseLlamaProps, parsePrometheusText, readLlamaServerMetrics } from '../../../src-main/core/telemetry/index.js';
import { connectSsh, exec, http } from './demo-client.js';

// The benchmark fleet: 64 hosts × 8 GPUs × 2 services (vLLM TP4 + llama-server
// over 4 GPUs) on one machine, one ssh2 server per host, one simulator per service.

let dir: string;
let fleet: DemoFleet;
let startMs: number;
let heapGrowthMiB: number;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'demo-synth-'));
  const heap = process.memoryUsage().heapUsed;
  const t0 = Date.now();
  fleet = await startDemoFleet({ dir, profiles: syntheticProfiles(64, { gpusPerHost: 8, servicesPerHost: 2 }) });
  startMs = Date.now() - t0;
  heapGrowthMiB = (process.memoryUsage().heapUsed - heap) / 1048576;
}, 120_000);

afterAll(async () => {
  await fleet?.dispose();
  rmSync(dir, { recursive: true, force: true });
});

describe('synthetic demo fleet', () => {
  it('starts 64 hosts with 8 GPUs and 2 services each, quickly and in modest memory, with a valid console config', () => {
    expect(fleet.hosts).toHaveLength(64);
    expect(fleet.hosts.map((h) => h.label).slice(0, 2)).toEqual(['synth-001', 'synth-002']);
    expect(new Set(fleet.hosts.map((h) => h.sshPort)).size).toBe(64);
    expect(readFileSync(fleet.knownHostsFile, 'utf8').trim().split('\n')).toHaveLength(64);
    for (const h of fleet.config.hosts) {
      expect(h.gpu).toEqual({ model: 'NVIDIA H100 80GB HBM3', count: 8 });
      expect(h.services.map((s) => [s.id, s.kind, s.remotePort])).toEqual([
        ['svc0', 'vllm', 8000],
        ['svc1', 'llama-server', 8001],
      ]);
    }
    const config = validateConfig({ hosts: fleet.config.hosts }, { home: dir });
    expect(config.hosts).toHaveLength(64);
    // Printed for the record; generous bounds so a busy CI core does not fail it.
    console.log(`synthetic fleet: 64 hosts started in ${startMs} ms, heap +${heapGrowthMiB.toFixed(1)} MiB`);
    expect(startMs).toBeLessThan(60_000);
    expect(heapGrowthMiB).toBeLessThan(300);
  });

  it('answers on a host: 8 GPUs with both services placed, TP4 vLLM and a 4-slot llama-server, no background traffic', async () => {
    const host = fleet.host('synth-064');
    const client = await connectSsh(fleet, host);
    try {
      expect((await exec(client, GPU_DETECT_COMMAND)).stdout).toBe('tool nvidia-smi\n');
      const rows = (await exec(client, 'nvidia-smi --query-gpu=index,memory.used --format=csv,noheader,nounits')).stdout.trim().split('\n');
      expect(rows).toHaveLength(8);
      // vLLM holds ~72 GiB on each of its 4 GPUs, llama-server splits its 33 GiB over the other 4.
      const used = rows.map((row) => Number(row.split(', ')[1]));
      for (const mib of used.slice(0, 4)) expect(mib).toBeGreaterThan(70_000);
      for (const mib of used.slice(4)) expect(mib).toBeGreaterThan(8_000);
      const apps = (await exec(client, 'nvidia-smi --query-compute-apps=process_name --format=csv,noheader')).stdout.trim().split('\n');
      expect(apps.sort()).toEqual([...Array(4).fill('VLLM::Worker_TP0').map((_, i) => `VLLM::Worker_TP${i}`), ...Array(4).fill('llama-server')].sort());
      const props = parseLlamaProps((await http(client, 8001, 'GET', '/props')).body)!;
      expect(props).toMatchObject({ totalSlots: 4, nCtx: 32768, model: 'qwen3-32b-synth-064-s1' });
      const models = JSON.parse((await http(client, 8000, 'GET', '/v1/models')).body);
      expect(models.data[0].id).toBe('llama-3.3-70b-synth-064-s0');
      await new Promise((r) => setTimeout(r, 500));
      const m = readLlamaServerMetrics(parsePrometheusText((await http(client, 8001, 'GET', '/metrics')).body).families);
      expect(m).toMatchObject({ running: 0, promptTokensTotal: 0, generationTokensTotal: 0 });
    } finally {
      client.end();
    }
  });

  it('splits GPUs as asked and refuses duplicate labels', async () => {
    const three = syntheticProfiles(2, { gpusPerHost: 3, servicesPerHost: 3, engines: ['llama-server'], labelPrefix: 'x' });
    expect(three.map((h) => h.label)).toEqual(['x-001', 'x-002']);
    expect(three[0]!.services.map((s) => [s.engine, s.gpuIndices])).toEqual([
      ['llama-server', [0]],
      ['llama-server', [1]],
      ['llama-server', [2]],
    ]);
    const crowded = syntheticProfiles(1, { gpusPerHost: 1, servicesPerHost: 2 });
    expect(crowded[0]!.services.map((s) => s.gpuIndices)).toEqual([[0], [0]]);
    await expect(startDemoFleet({ dir, profiles: [...three, three[0]!] })).rejects.toMatchObject({ code: 'DEMO_BAD_OPTIONS' });
  });
});
