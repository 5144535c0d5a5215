import { describe, expect, it } from 'vitest';
import { amdGpuProcesses, matchGpuProcesses, type MatchInput } from '../../../../src-main/core/fleet/gpu-process-match.js';

// Field notes §2: a stale llama-server left after an OOM kill held :8080 and
// the service crash-looped; §4: vLLM's engine cores hold the GPU, its API
// server (their parent) holds the port.

const ps = (rows: [number, number, string, string][]) => rows.map(([pid, ppid, user, comm]) => ({ pid, ppid, user, comm }));

const base: MatchInput = {
  sshUser: 'ops',
  services: [
    { id: 'qwen', remoteHost: '127.0.0.1', remotePort: 8000, health: 'ok' },
    { id: 'coder', remoteHost: '127.0.0.1', remotePort: 8080, health: 'ok' },
  ],
  processes: ps([
    [1, 0, 'root', 'systemd'],
    [4100, 1, 'ops', 'python3'], // vllm serve (API server, listens on :8000)
    [4103, 4100, 'ops', 'VLLM::EngineCor'],
    [812, 1, 'ops', 'llama-server'], // coder
    [4812, 1, 'ops', 'llama-server'], // a leftover
  ]),
  listeners: [
    { address: '127.0.0.1', port: 8000, holders: [{ pid: 4100, name: 'python3' }] },
    { address: '127.0.0.1', port: 8080, holders: [{ pid: 812, name: 'llama-server' }] },
  ],
  gpus: [
    { index: 0, processes: [{ pid: 4103, name: 'VLLM::EngineCore', usedMemoryMiB: 38_751 }] },
    {
      index: 1,
      processes: [
        { pid: 812, name: 'llama-server', usedMemoryMiB: 14_000 },
        { pid: 4812, name: 'llama-server', usedMemoryMiB: 9_318 },
      ],
    },
  ],
};

describe('matchGpuProcesses', () => {
  it("matches vLLM's engine core through its parent's port and llama-server by its own", () => {
    const r = matchGpuProcesses(base);
    expect(r.processes.find((p) => p.pid === 4103)).toMatchObject({ gpuIndex: 0, serviceId: 'qwen', user: 'ops', why: 'it or its parent listens on :8000' });
    expect(r.processes.find((p) => p.pid === 812)).toMatchObject({ gpuIndex: 1, serviceId: 'coder' });
  });

  it('names memory held by no configured service, with what to run (never run)', () => {
    const r = matchGpuProcesses(base);
    expect(r.processes.find((p) => p.pid === 4812)).toMatchObject({ serviceId: null });
    expect(r.flags).toEqual([
      {
        code: 'FLEET_GPU_PROCESS_UNKNOWN',
        message: 'PID 4812 llama-server holds 9.1 GiB on GPU1 — not a configured service',
        pid: 4812,
        serviceId: null,
        gpuIndex: 1,
        command: 'kill 4812',
      },
    ]);
  });

  it("another user's process needs sudo; one in a container is stopped through docker", () => {
    const r = matchGpuProcesses({
      ...base,
      processes: ps([
        [1, 0, 'root', 'systemd'],
        [4100, 1, 'ops', 'python3'],
        [4103, 4100, 'ops', 'VLLM::EngineCor'],
        [812, 1, 'ops', 'llama-server'],
        [4812, 1, 'alice', 'llama-server'],
        [700, 1, 'root', 'containerd-shim-runc-v2'],
        [5000, 700, 'root', 'python3'],
      ]),
      gpus: [...base.gpus, { index: 2, processes: [{ pid: 5000, name: 'python3', usedMemoryMiB: 2048 }] }],
    });
    expect(r.flags.map((f) => f.command)).toEqual(['sudo kill 4812', expect.stringMatching(/^docker ps -q \| xargs docker inspect .*then docker stop <name>$/)]);
  });

  it('flags a second, unrelated listener on a service port (a ghost squatting it), naming both', () => {
    const r = matchGpuProcesses({
      ...base,
      listeners: [
        base.listeners![0]!,
        { address: '127.0.0.1', port: 8080, holders: [{ pid: 812, name: 'llama-server' }, { pid: 4812, name: 'llama-server' }] },
      ],
    });
    const second = r.flags.find((f) => f.code === 'FLEET_PORT_SECOND_LISTENER');
    expect(second).toMatchObject({ serviceId: 'coder', pid: 4812 });
    expect(second!.message).toBe(':8080 of coder has 2 unrelated listeners: PID 812 (llama-server), PID 4812 (llama-server) — a second server or a ghost squatting the port');
    expect(second!.command).toBe('ps -o pid,lstart,args -p 812,4812 (the older one is the stale one), then kill 4812');
    // Both listen on coder's port: the ghost's memory is not "no service" but the flag says the port has two owners.
    expect(r.flags.some((f) => f.code === 'FLEET_GPU_PROCESS_UNKNOWN')).toBe(false);
  });

  it('workers of one server on one port (parent and children) are one listener, not a conflict', () => {
    const r = matchGpuProcesses({
      ...base,
      processes: ps([[1, 0, 'root', 'systemd'], [4100, 1, 'ops', 'python3'], [4101, 4100, 'ops', 'python3'], [4103, 4100, 'ops', 'VLLM::EngineCor'], [812, 1, 'ops', 'llama-server']]),
      listeners: [{ address: '127.0.0.1', port: 8000, holders: [{ pid: 4100, name: 'python3' }, { pid: 4101, name: 'python3' }] }, base.listeners![1]!],
      gpus: [base.gpus[0]!],
    });
    expect(r.flags).toEqual([]);
  });

  it('a process listening on the port of a service that does not answer is a stale listener', () => {
    const r = matchGpuProcesses({ ...base, services: [base.services[0]!, { ...base.services[1]!, health: 'down' }], gpus: [base.gpus[0]!] });
    expect(r.flags).toEqual([
      expect.objectContaining({ code: 'FLEET_PORT_STALE_LISTENER', pid: 812, serviceId: 'coder', command: 'kill 812', message: expect.stringContaining('PID 812 (llama-server) listens on :8080 but coder does not answer') }),
    ]);
  });

  it('says why a process could not be matched when a port is behind a container proxy, and a PID newer than the process list is not flagged yet', () => {
    const r = matchGpuProcesses({
      ...base,
      listeners: [{ address: '0.0.0.0', port: 8000, holders: [{ pid: 3000, name: 'docker-proxy' }] }, base.listeners![1]!],
      gpus: [{ index: 0, processes: [{ pid: 4103, name: 'VLLM::EngineCore', usedMemoryMiB: 1024 }, { pid: 9999, name: 'python3', usedMemoryMiB: 1024 }] }],
      processListOlder: true,
    });
    const unknown = r.flags.filter((f) => f.code === 'FLEET_GPU_PROCESS_UNKNOWN');
    expect(unknown).toHaveLength(1);
    expect(unknown[0]!.message).toContain('(not every service\'s process could be seen: docker-proxy holds :8000 (the server is in a container))');
    expect(r.processes.find((p) => p.pid === 9999)).toMatchObject({ serviceId: null, why: 'started after the last process list; matched at the next one' });
  });
});

describe('amdGpuProcesses', () => {
  it("sums a process's DRM clients per card and names it from the process list; other cards' PCI addresses map to their index", () => {
    const m = amdGpuProcesses(
      [
        { pid: 3100, pdev: '0000:c3:00.0', clientId: '18', vramBytes: 40 * 1024 ** 3 },
        { pid: 3100, pdev: '0000:c3:00.0', clientId: '19', vramBytes: 1024 ** 3 },
        { pid: 3200, pdev: '0000:03:00.0', clientId: '4', vramBytes: 512 * 1024 ** 2 },
        { pid: 3300, pdev: '0000:99:00.0', clientId: '5', vramBytes: 1 },
      ],
      new Map([['0000:c3:00.0', 0], ['0000:03:00.0', 1]]),
      ps([[3100, 1, 'ops', 'llama-server'], [3200, 1, 'ops', 'python3']]),
    );
    expect(m.get(0)).toEqual([{ pid: 3100, name: 'llama-server', usedMemoryMiB: 41 * 1024 }]);
    expect(m.get(1)).toEqual([{ pid: 3200, name: 'python3', usedMemoryMiB: 512 }]);
    expect(m.size).toBe(2);
  });
});
