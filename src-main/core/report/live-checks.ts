// Live checks of one host for the evidence report, run now: facts read over
// SSH (nvidia-smi, ss, sshd -T) and through each service's upstream client —
// the fleet's, bound to its tunnel — (/health, /version or /props, /v1/models),
// each check pass | fail | unverified.
// Whatever cannot be measured (host down, a command refused, a deadline
// passed) is unverified with the reason, never pass. runLiveChecks never
// throws, and the services' API keys never reach its result.

import type { Check, HostSecurity, InventoryHost, InventoryService } from '../../../src-preload/contract/index.js';
import { AppError, OnPremErrorCode, type Clock } from '../base/index.js';
import type { UpstreamClient } from '../upstream/index.js';
import { healthPathOf, type HostConfig, type ServiceConfig } from '../config/index.js';
import { shellJoin, type ExecResult } from '../ssh/index.js';
import { bindScope, parseSocketAddress, parseSshdConfig, parseSsListeners, passwordAuthVerdict, rootLoginVerdict, type BindScope, type Measured, type SsListener } from './host-facts.js';
import { describeError, exitText, isTimeout, oneLine, outputExcerpt, withinDeadline } from './check-deadline.js';
import { redactServiceConfig, scrubSecrets } from './redact-config.js';
import { AMD_SYSFS_COMMAND, nvidiaSmiQueryCommand, parseAmdSysfs, parseLlamaProps, parseNvidiaSmiCsv, parseTeiInfo, parseVllmModels, parseVllmVersion } from '../telemetry/index.js';

export const DEFAULT_CHECK_TIMEOUT_MS = 10_000;
const MAX_BODY_BYTES = 256 * 1024;

export interface LiveHttpResponse {
  status: number;
  text: string;
}

/** What the checks use of a service's upstream client (the fleet's, bound to its tunnel). */
export type LiveUpstream = Pick<UpstreamClient, 'request' | 'target'>;

export interface LiveCheckDeps {
  /** One command on the host's SSH session (FleetService.exec). */
  exec(command: string, opts: { timeoutMs: number; signal?: AbortSignal }): Promise<ExecResult>;
  /** The upstream client of a service (its tunnel's); throws while the tunnel is down. */
  upstream(serviceId: string): LiveUpstream;
  /** The service's upstream API key from the secret store; null when none is configured. */
  apiKey(serviceId: string): Promise<string | null>;
  /** The key the session verified at connect (null when it never connected). */
  hostKeyFingerprint: string | null;
  /** The host's SSH connection state (`connected`, `reconnecting`, …). */
  connection: string;
  /** The SSH transport, as the evidence names it (null when unknown). */
  sshTransport?: string | null;
  clock: Clock;
  /** Deadline of each check. Default 10 s. */
  checkTimeoutMs?: number;
}

export interface LiveCheckResult {
  inventory: InventoryHost;
  security: HostSecurity;
}

/** Stable ids of the checks, for gates and tests. */
export const LiveCheckId = {
  HOST_KEY: 'ssh.host-key',
  GPU_VISIBLE: 'gpu.visible',
  PASSWORD_AUTH: 'sshd.password-auth',
  ROOT_LOGIN: 'sshd.root-login',
  portLoopback: (serviceId: string) => `port.loopback.${serviceId}`,
  apiHealth: (serviceId: string) => `api.health.${serviceId}`,
  apiAuth: (serviceId: string) => `api.auth.${serviceId}`,
} as const;

const LABELS = {
  hostKey: 'SSH host key verified',
  gpu: 'nvidia-smi lists at least one GPU',
  password: 'sshd refuses password logins',
  root: 'sshd refuses root logins with a password',
  port: (s: ServiceConfig) => `${s.id}: model port ${s.remotePort} bound to loopback only`,
  health: (s: ServiceConfig) => `${s.id}: /health answers 200 without a key`,
  auth: (s: ServiceConfig) => `${s.id}: API refuses requests without the key`,
};

export { bindScope, parseSocketAddress, parseSshdConfig, parseSsListeners, passwordAuthVerdict, rootLoginVerdict, redactServiceConfig, type BindScope, type Measured, type SsListener };

// ── the checks ────────────────────────────────────────────────────────────

interface Ctx {
  deps: LiveCheckDeps;
  timeoutMs: number;
}

type Outcome<T> = { ok: true; value: T } | { ok: false; reason: string; timedOut: boolean };

async function attempt<T>(ctx: Ctx, work: (signal: AbortSignal) => Promise<T>): Promise<Outcome<T>> {
  try {
    return { ok: true, value: await withinDeadline(ctx.deps.clock, ctx.timeoutMs, work) };
  } catch (err) {
    return { ok: false, reason: describeError(err, ctx.timeoutMs), timedOut: isTimeout(err) };
  }
}

/** A command line built from fixed words, shell-quoted all the same. */
const command = (...words: string[]): string => shellJoin(words);

function run(ctx: Ctx, cmd: string, signal: AbortSignal): Promise<ExecResult> {
  return ctx.deps.exec(cmd, { timeoutMs: ctx.timeoutMs, signal });
}

interface GpuFacts {
  gpus: InventoryHost['gpus'];
  check: Measured;
}

const GPU_FIELDS = ['index', 'name', 'memory.total', 'driver_version'] as const;

async function readGpus(ctx: Ctx): Promise<Outcome<GpuFacts>> {
  return attempt(ctx, async (signal) => {
    const r = await run(ctx, nvidiaSmiQueryCommand(GPU_FIELDS), signal);
    if (r.exitCode === 127) return readAmdGpus(ctx, signal, `nvidia-smi not found (${outputExcerpt(r)})`);
    if (r.exitCode !== 0) return { gpus: [], check: { verdict: 'fail', evidence: `nvidia-smi failed (${exitText(r)}): ${outputExcerpt(r)}` } };
    const { rows } = parseNvidiaSmiCsv(r.stdout, GPU_FIELDS);
    // The driver version is read as text: the lenient parser would turn "550.90" into the number 550.9.
    const drivers = r.stdout
      .split(/\r?\n/)
      .filter((l) => l.trim() !== '')
      .map((l) => l.split(','))
      .filter((cells) => cells.length === GPU_FIELDS.length)
      .map((cells) => cells[3]!.trim());
    const gpus = rows.map((row, i) => {
      const driver = drivers[i] ?? '';
      return {
        index: typeof row.index === 'number' ? row.index : i,
        name: typeof row.name === 'string' ? row.name : String(row.name ?? 'unknown'),
        memoryTotalMiB: typeof row['memory.total'] === 'number' ? row['memory.total'] : null,
        driverVersion: driver === '' || driver === 'N/A' || driver.startsWith('[') ? null : driver,
      };
    });
    if (gpus.length === 0) return { gpus, check: { verdict: 'fail', evidence: `nvidia-smi listed no GPU: ${outputExcerpt(r)}` } };
    const names = gpus.map((g) => `${g.index}: ${g.name}${g.memoryTotalMiB !== null ? ` (${g.memoryTotalMiB} MiB)` : ''}`).join(', ');
    const driver = gpus[0]!.driverVersion;
    return { gpus, check: { verdict: 'pass', evidence: `nvidia-smi lists ${gpus.length} GPU${gpus.length === 1 ? '' : 's'}: ${names}${driver ? `; driver ${driver}` : ''}` } };
  });
}

/** An AMD host (no nvidia-smi): the amdgpu sysfs files, as the fleet reads them. */
async function readAmdGpus(ctx: Ctx, signal: AbortSignal, noNvidia: string): Promise<GpuFacts> {
  const r = await run(ctx, AMD_SYSFS_COMMAND, signal);
  const parsed = r.exitCode === 0 ? parseAmdSysfs(r.stdout) : null;
  if (parsed === null || parsed.gpus.length === 0) {
    return { gpus: [], check: { verdict: 'unverified', evidence: `${noNvidia}; no amdgpu sysfs GPU either (${r.exitCode === 0 ? 'no card listed' : exitText(r)})` } };
  }
  const gpus = parsed.gpus.map((g) => ({ index: g.index, name: g.name, memoryTotalMiB: g.memoryTotalMiB === null ? null : Math.round(g.memoryTotalMiB), driverVersion: null }));
  const names = parsed.gpus
    .map((g) => `${g.index}: ${g.name}${g.memoryTotalMiB !== null ? ` (VRAM ${Math.round(g.memoryTotalMiB)} MiB` : ' ('}${g.gttTotalMiB != null ? `, GTT ${Math.round(g.gttTotalMiB)} MiB)` : ')'}`)
    .join(', ');
  return { gpus, check: { verdict: 'pass', evidence: `amdgpu sysfs lists ${gpus.length} GPU${gpus.length === 1 ? '' : 's'}: ${names}` } };
}

type SsFacts = { ok: true; source: string; listeners: SsListener[] } | { ok: false; evidence: string };

async function readListeners(ctx: Ctx): Promise<Outcome<SsFacts>> {
  return attempt(ctx, async (signal): Promise<SsFacts> => {
    const tries: string[] = [];
    // -H (no header) is missing from old iproute2; ss -ltn says the same with a header line.
    for (const words of [['ss', '-ltnH'], ['ss', '-ltn']]) {
      const cmd = command(...words);
      const r = await run(ctx, cmd, signal);
      if (r.exitCode === 0) return { ok: true, source: cmd, listeners: parseSsListeners(r.stdout) };
      tries.push(`${cmd}: ${outputExcerpt(r)} (${exitText(r)})`);
      if (r.exitCode === 127) break;
    }
    return { ok: false, evidence: `ss unavailable: ${tries.join('; ')}` };
  });
}

type SshdFacts = { ok: true; source: string; config: Map<string, string> } | { ok: false; evidence: string };

async function readSshd(ctx: Ctx): Promise<Outcome<SshdFacts>> {
  return attempt(ctx, async (signal): Promise<SshdFacts> => {
    const tries: string[] = [];
    // sshd -T must read the host keys, so it needs root: plain first, then passwordless sudo (never a prompt).
    for (const words of [['sshd', '-T'], ['sudo', '-n', 'sshd', '-T']]) {
      const cmd = command(...words);
      const r = await run(ctx, cmd, signal);
      const config = parseSshdConfig(r.stdout);
      if (r.exitCode === 0 && (config.has('passwordauthentication') || config.has('permitrootlogin'))) return { ok: true, source: cmd, config };
      tries.push(`${cmd}: ${outputExcerpt(r)} (${exitText(r)})`);
    }
    return { ok: false, evidence: `sshd -T not permitted for this user (${tries.join('; ')})` };
  });
}

const LOOPBACK_NAMES = new Set(['127.0.0.1', 'localhost', '::1', '[::1]']);

function portCheck(service: ServiceConfig, ss: Outcome<SsFacts>): Measured {
  if (!LOOPBACK_NAMES.has(service.remoteHost) && bindScope(service.remoteHost, null) !== 'loopback') {
    return { verdict: 'unverified', evidence: `the service runs on ${service.remoteHost}, not on this SSH host: its bind address cannot be read here` };
  }
  if (!ss.ok) return { verdict: 'unverified', evidence: `ss: ${ss.reason}` };
  if (!ss.value.ok) return { verdict: 'unverified', evidence: ss.value.evidence };
  const { source, listeners } = ss.value;
  const port = service.remotePort;
  const bound = listeners.filter((l) => l.port === port);
  if (bound.length === 0) return { verdict: 'fail', evidence: `${source}: nothing listens on TCP port ${port}` };
  const exposed = bound.filter((l) => l.scope !== 'loopback');
  if (exposed.length > 0) {
    return { verdict: 'fail', evidence: `${source}: port ${port} is reachable beyond loopback: ${exposed.map((l) => `"${l.line}"`).join('; ')}` };
  }
  return { verdict: 'pass', evidence: `${source}: port ${port} bound to ${bound.map((l) => `${l.address}${l.iface ? `%${l.iface}` : ''}`).join(', ')} only: ${bound.map((l) => `"${l.line}"`).join('; ')}` };
}

interface ServiceFacts {
  health: Measured;
  auth: Measured;
  inventory: InventoryHost['services'][number];
}

function upstreamOf(ctx: Ctx, service: ServiceConfig): { ok: true; upstream: LiveUpstream } | { ok: false; reason: string } {
  try {
    return { ok: true, upstream: ctx.deps.upstream(service.id) };
  } catch (err) {
    // The on-prem guard refused its client where it was made: that, not a closed tunnel, is the reason.
    if (err instanceof AppError && err.code === OnPremErrorCode.REFUSED) return { ok: false, reason: oneLine(err.message) };
    return { ok: false, reason: `tunnel not open: ${describeError(err, ctx.timeoutMs)}` };
  }
}

/** The console's own tunnel answers 502/503 `{"error":{"type":"tunnel_error"}}` when the host refuses the channel: no answer from the service. */
function tunnelError(res: LiveHttpResponse): string | null {
  if (res.status !== 502 && res.status !== 503) return null;
  try {
    const e = (JSON.parse(res.text) as { error?: { type?: unknown; code?: unknown; message?: unknown } }).error;
    if (e?.type !== 'tunnel_error') return null;
    return `${typeof e.code === 'string' ? `${e.code}: ` : ''}${typeof e.message === 'string' ? e.message : 'tunnel error'}`;
  } catch {
    return null;
  }
}

/** GET through the service's client, with the check's deadline (the injected clock's signal) and a body cap; no redirects. */
async function get(ctx: Ctx, upstream: LiveUpstream, path: string, key: string | null): Promise<Outcome<LiveHttpResponse>> {
  const headers: Record<string, string> = { accept: 'application/json', ...(key !== null ? { authorization: `Bearer ${key}` } : {}) };
  const out = await attempt(ctx, async (signal) => {
    const r = await upstream.request({ path, headers, signal, deadlineMs: ctx.timeoutMs, maxBodyBytes: MAX_BODY_BYTES, overflow: 'truncate' });
    return { status: r.status, text: r.text };
  });
  const viaTunnel = out.ok ? tunnelError(out.value) : null;
  return viaTunnel !== null ? { ok: false, reason: oneLine(viaTunnel), timedOut: false } : out;
}

async function readKey(ctx: Ctx, service: ServiceConfig): Promise<Outcome<string | null>> {
  return attempt(ctx, () => ctx.deps.apiKey(service.id));
}

/** A service's inventory row from its config alone (redacted); live checks fill in version, models and health. */
export function configuredService(service: ServiceConfig, health: InventoryService['health'] = 'unknown'): InventoryService {
  return {
    id: service.id,
    kind: service.kind,
    model: service.model,
    aliases: [...service.aliases],
    remotePort: service.remotePort,
    slots: service.slots,
    serverVersion: null,
    servedModels: [],
    health,
    config: redactServiceConfig(service) as Record<string, unknown>,
  };
}

/** Where each kind says its version: vLLM /version, llama-server /props, SGLang /get_server_info, TEI /info; openai: its model list (no version). */
const VERSION_PATH: Record<ServiceConfig['kind'], string> = { vllm: '/version', 'llama-server': '/props', sglang: '/get_server_info', tei: '/info', openai: '/v1/models' };

async function checkService(ctx: Ctx, service: ServiceConfig, keyOutcome: Outcome<string | null>): Promise<ServiceFacts> {
  const inventory: ServiceFacts['inventory'] = configuredService(service);
  const base = upstreamOf(ctx, service);
  if (!base.ok) {
    const off: Measured = { verdict: 'unverified', evidence: base.reason };
    return { health: off, auth: off, inventory };
  }
  const up = base.upstream;
  const key = keyOutcome.ok ? keyOutcome.value : null;
  // llama-server answers /v1/models without a key even when one is set; /props is behind it.
  // TEI has no /v1/models; its /info is behind the key.
  const protectedPath = service.kind === 'llama-server' ? '/props' : service.kind === 'tei' ? '/info' : '/v1/models';
  const healthPath = healthPathOf(service);

  const [health, auth, version, models] = await Promise.all([
    get(ctx, up, healthPath, null),
    (async (): Promise<Measured> => {
      if (!keyOutcome.ok) return { verdict: 'unverified', evidence: `the API key could not be read: ${keyOutcome.reason}` };
      if (key === null) return { verdict: 'unverified', evidence: 'no API key configured for this service' };
      const without = await get(ctx, up, protectedPath, null);
      if (!without.ok) return { verdict: 'unverified', evidence: `GET ${protectedPath} without a key: ${without.reason}` };
      const w = without.value.status;
      const first = `GET ${protectedPath} without a key → ${w}`;
      if (w === 200) return { verdict: 'fail', evidence: `${first} (answered without authentication)` };
      // Any other refusal (404, 5xx) says nothing about authentication.
      if (w !== 401 && w !== 403) return { verdict: 'unverified', evidence: `${first}: ${oneLine(without.value.text || '(empty body)', 160)}` };
      const withKey = await get(ctx, up, protectedPath, key);
      if (!withKey.ok) return { verdict: 'unverified', evidence: `${first}; with the configured key: ${withKey.reason}` };
      const k = withKey.value.status;
      if (k === 200) return { verdict: 'pass', evidence: `${first}; with the configured key → 200` };
      if (k === 401 || k === 403) return { verdict: 'fail', evidence: `${first}; with the configured key → ${k} (the key is refused)` };
      return { verdict: 'unverified', evidence: `${first}; with the configured key → ${k}: ${oneLine(withKey.value.text || '(empty body)', 160)}` };
    })(),
    get(ctx, up, VERSION_PATH[service.kind], key),
    get(ctx, up, '/v1/models', key),
  ]);

  let healthCheck: Measured;
  if (health.ok) {
    const s = health.value.status;
    inventory.health = s === 200 ? 'ok' : 'down';
    healthCheck = s === 200 ? { verdict: 'pass', evidence: `GET ${healthPath} → 200` } : { verdict: 'fail', evidence: `GET ${healthPath} → ${s}: ${oneLine(health.value.text || '(empty body)', 160)}` };
  } else if (health.timedOut) {
    healthCheck = { verdict: 'unverified', evidence: `GET ${healthPath}: ${health.reason}` };
  } else {
    inventory.health = 'down';
    healthCheck = { verdict: 'fail', evidence: `GET ${healthPath}: no answer through the tunnel (${health.reason})` };
  }

  let nCtx: number | null = null;
  if (version.ok && version.value.status === 200) {
    if (service.kind === 'vllm' || service.kind === 'sglang') inventory.serverVersion = parseVllmVersion(version.value.text);
    else if (service.kind === 'tei') inventory.serverVersion = parseTeiInfo(version.value.text)?.version ?? null;
    else if (service.kind === 'llama-server') {
      const props = parseLlamaProps(version.value.text);
      nCtx = props?.nCtx ?? null;
      inventory.serverVersion = props?.buildInfo ?? llamaBuildNumber(version.value.text);
    }
  }
  if (models.ok && models.value.status === 200) {
    const cards = parseVllmModels(models.value.text) ?? [];
    inventory.servedModels = cards.map((c) => ({ id: c.id, maxContext: c.maxModelLen !== null ? Math.trunc(c.maxModelLen) : nCtx !== null ? Math.trunc(nCtx) : null }));
  }
  return { health: healthCheck, auth, inventory };
}

function llamaBuildNumber(text: string): string | null {
  try {
    const body = JSON.parse(text) as { build_number?: unknown };
    return typeof body.build_number === 'number' || typeof body.build_number === 'string' ? `b${body.build_number}` : null;
  } catch {
    return null;
  }
}

function hostKeyCheck(deps: LiveCheckDeps): Measured {
  const fp = deps.hostKeyFingerprint;
  if (deps.connection !== 'connected') {
    return { verdict: 'unverified', evidence: `not connected (SSH ${deps.connection})${fp ? `; last key seen ${fp}` : ''}` };
  }
  if (!fp) return { verdict: 'unverified', evidence: 'connected, but the session reports no host key fingerprint' };
  return { verdict: 'pass', evidence: `${fp} (verified at connect against known_hosts or the console's trust store)` };
}

function address(host: HostConfig): string {
  return `${host.ssh.user}@${host.ssh.host}:${host.ssh.port}`;
}

/**
 * Runs every live check of one host. A host that is not connected gets
 * `inventory.liveError` and every check unverified, without any I/O.
 */
export async function runLiveChecks(host: HostConfig, deps: LiveCheckDeps): Promise<LiveCheckResult> {
  const timeoutMs = deps.checkTimeoutMs ?? DEFAULT_CHECK_TIMEOUT_MS;
  const ctx: Ctx = { deps, timeoutMs };
  const secrets: string[] = [];
  try {
    const result = await checkHost(host, ctx, secrets);
    return scrubSecrets(result, secrets);
  } catch (err) {
    // A bug, not a host problem: still an answer, with the reason.
    return scrubSecrets(notMeasured(host, deps, `live checks failed: ${describeError(err, timeoutMs)}`), secrets);
  }
}

async function checkHost(host: HostConfig, ctx: Ctx, secrets: string[]): Promise<LiveCheckResult> {
  const { deps } = ctx;
  if (deps.connection !== 'connected') {
    return notMeasured(host, deps, `host not connected (SSH ${deps.connection}); live checks were not run`);
  }
  const keys = await Promise.all(
    host.services.map(async (s) => {
      const k = await readKey(ctx, s);
      if (k.ok && k.value !== null) secrets.push(k.value);
      return k;
    }),
  );
  const [gpu, ss, sshd, services] = await Promise.all([
    readGpus(ctx),
    readListeners(ctx),
    readSshd(ctx),
    Promise.all(host.services.map((s, i) => checkService(ctx, s, keys[i]!))),
  ]);
  const at = deps.clock.now();
  const checks: Check[] = [];
  const add = (id: string, label: string, m: Measured) => checks.push({ id, label, ...m, at: m.verdict === 'unverified' ? null : at });

  add(LiveCheckId.HOST_KEY, LABELS.hostKey, hostKeyCheck(deps));
  add(LiveCheckId.GPU_VISIBLE, LABELS.gpu, gpu.ok ? gpu.value.check : { verdict: 'unverified', evidence: `nvidia-smi: ${gpu.reason}` });
  const sshdFailed: Measured | null = !sshd.ok
    ? { verdict: 'unverified', evidence: `sshd -T: ${sshd.reason}` }
    : !sshd.value.ok
      ? { verdict: 'unverified', evidence: sshd.value.evidence }
      : null;
  const sshdOk = sshd.ok && sshd.value.ok ? sshd.value : null;
  add(LiveCheckId.PASSWORD_AUTH, LABELS.password, sshdFailed ?? passwordAuthVerdict(sshdOk!.config, sshdOk!.source));
  add(LiveCheckId.ROOT_LOGIN, LABELS.root, sshdFailed ?? rootLoginVerdict(sshdOk!.config, sshdOk!.source));
  host.services.forEach((s, i) => {
    const facts = services[i]!;
    add(LiveCheckId.portLoopback(s.id), LABELS.port(s), portCheck(s, ss));
    add(LiveCheckId.apiHealth(s.id), LABELS.health(s), facts.health);
    add(LiveCheckId.apiAuth(s.id), LABELS.auth(s), facts.auth);
  });

  // Not one SSH command came back: the host went away during the checks.
  const execFailures = [gpu, ss, sshd].filter((o): o is Extract<typeof o, { ok: false }> => !o.ok);
  const liveError = execFailures.length === 3 ? `no SSH command answered during the checks (${execFailures[0]!.reason})` : null;

  return {
    inventory: inventoryOf(host, deps, liveError, gpu.ok ? gpu.value.gpus : [], services.map((f) => f.inventory)),
    security: { host: host.label, checks },
  };
}

function inventoryOf(host: HostConfig, deps: LiveCheckDeps, liveError: string | null, gpus: InventoryHost['gpus'], services: InventoryHost['services']): InventoryHost {
  return {
    label: host.label,
    address: address(host),
    jumpHost: host.ssh.jumpHost ?? null,
    sshTransport: deps.sshTransport ?? null,
    connection: deps.connection,
    liveError,
    hostKeyFingerprint: deps.hostKeyFingerprint,
    pricePerHourUsd: host.pricePerHourUsd ?? null,
    gpus,
    services,
  };
}

/** The answer for a host whose live facts could not be read: configured facts only, every check unverified. */
function notMeasured(host: HostConfig, deps: LiveCheckDeps, reason: string): LiveCheckResult {
  const off = (id: string, label: string): Check => ({ id, label, verdict: 'unverified', evidence: reason, at: null });
  const hostKey = hostKeyCheck(deps);
  const checks: Check[] = [
    { id: LiveCheckId.HOST_KEY, label: LABELS.hostKey, ...hostKey, at: hostKey.verdict === 'unverified' ? null : deps.clock.now() },
    off(LiveCheckId.GPU_VISIBLE, LABELS.gpu),
    off(LiveCheckId.PASSWORD_AUTH, LABELS.password),
    off(LiveCheckId.ROOT_LOGIN, LABELS.root),
  ];
  for (const s of host.services) {
    checks.push(off(LiveCheckId.portLoopback(s.id), LABELS.port(s)), off(LiveCheckId.apiHealth(s.id), LABELS.health(s)), off(LiveCheckId.apiAuth(s.id), LABELS.auth(s)));
  }
  return {
    inventory: inventoryOf(
      host,
      deps,
      reason,
      [],
      host.services.map((s) => configuredService(s)),
    ),
    security: { host: host.label, checks },
  };
}
