import { z } from 'zod';
import { isOnPremUrl } from '../base/index.js';
import { aliasProblem, hostProblem, jumpHostProblem, pathProblem, unbracketHost, userProblem } from './ssh-grammar.js';
import { NotifyConfigSchema } from '../../../src-preload/contract/notify.js';
import { LogSourceSchema } from './log-source.js';
import { HealthConfigSchema } from './health-schema.js';
import { AlertsConfigSchema, HostAlertsConfigSchema, alertModelIssues } from './alerts-schema.js';
import { upstreamKey } from '../upstream/index.js';
import { intRange, ListenPortSchema, PortSchema } from './number-fields.js';
import { ProxyConfigSchema, ProxyUpstreamConfigSchema } from './proxy-schema.js';
import { clientLimitIssues, pricedModels } from './clients-schema.js';
import { HealthPathSchema, ServiceKindSchema, serviceKindIssues } from './service-kind.js';
import { modelShapingIssues } from './models-schema.js';

export { PortSchema } from './number-fields.js';
export { ProxyConfigSchema, ProxyUpstreamConfigSchema } from './proxy-schema.js';

// Every object is strict: an unknown key is an error, because a misspelt key
// silently ignored is a setting the operator believes in and does not have.

const LABEL = /^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$/;
const SERVICE_ID = /^[A-Za-z0-9][A-Za-z0-9_-]{0,62}$/;

export const SshTransportSchema = z.enum(['auto', 'builtin', 'openssh'], { error: 'must be one of: auto, builtin, openssh' });

/** A string checked by one of the ssh grammar's rules (null: fine; else why not), as a config issue; names are trimmed first. */
function grammar(check: (s: string) => string | null, trim = true) {
  return (trim ? z.string().trim() : z.string()).superRefine((s, ctx) => {
    const problem = check(s);
    if (problem) ctx.addIssue({ code: 'custom', message: problem });
  });
}

/** A file path: one line, no control characters (it is written into an ssh config, quoted). */
const pathField = () => grammar(pathProblem, false);

export const SshConfigSchema = z
  .object({
    /** A host name or an IP address (`[v6]` is taken and stored without its brackets, as ssh's HostName wants it). */
    host: grammar(hostProblem).transform(unbracketHost),
    port: PortSchema.default(22),
    user: grammar(userProblem),
    identityFile: pathField().optional(),
    agent: z.boolean().optional(),
    /** One hop `[user@]host[:port]`, or a chain `a,b,c` as OpenSSH's ProxyJump (the builtin transport takes one hop). */
    jumpHost: grammar(jumpHostProblem).optional(),
    keepaliveIntervalMs: intRange(1000, 600_000).optional(),
    /** builtin: ssh2 in the console; openssh: the system `ssh` (ControlMaster); auto: see the README. Default: the fleet's `ssh.transport`. */
    transport: SshTransportSchema.optional(),
    /** An OpenSSH user certificate for identityFile (openssh transport). */
    certificateFile: pathField().optional(),
    /** An agent socket other than SSH_AUTH_SOCK (OpenSSH's IdentityAgent). */
    identityAgent: pathField().optional(),
    /** OpenSSH's ProxyCommand, run by ssh (openssh transport); `%h`, `%p` and `%r` as ssh expands them. */
    proxyCommand: z.string().trim().min(1, { error: 'proxyCommand must not be empty' }).max(2000, { error: 'proxyCommand must be at most 2000 characters' }).optional(),
    /**
     * The `Host` alias of an OpenSSH config this host was written for: the openssh transport connects to
     * the alias, so Include, Match, ProxyCommand and the rest apply as written.
     */
    configHost: grammar(aliasProblem).optional(),
    /** The OpenSSH config configHost is read from; default ~/.ssh/config. */
    configFile: pathField().optional(),
  })
  .strict()
  .refine((ssh) => ssh.identityFile !== undefined || ssh.agent === true || ssh.identityAgent !== undefined || ssh.configHost !== undefined, {
    error: 'needs identityFile or agent: true (or both), or a configHost whose OpenSSH config names them',
  })
  .refine((ssh) => ssh.certificateFile === undefined || ssh.identityFile !== undefined || ssh.configHost !== undefined, {
    error: 'certificateFile needs the identityFile it certifies',
    path: ['certificateFile'],
  })
  .refine((ssh) => ssh.proxyCommand === undefined || ssh.jumpHost === undefined, {
    error: 'set jumpHost or proxyCommand, not both (OpenSSH would use only the first it reads)',
    path: ['proxyCommand'],
  });

// A systemd unit name the console may put on a command line: no leading "-"
// (systemctl would read an option), none of the shell's or systemd's escapes.
const SYSTEMD_UNIT = /^[A-Za-z0-9][A-Za-z0-9:_.@-]{0,250}$/;
const OTHER_UNIT_TYPES = /\.(socket|device|mount|automount|swap|target|path|timer|slice|scope)$/;
// Compose: service names as the compose spec allows them, project names as `docker compose -p` does.
const COMPOSE_SERVICE = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$/;
const COMPOSE_PROJECT = /^[a-z0-9][a-z0-9_-]{0,127}$/;

export const ComposeRestartSchema = z
  .object({
    /** The compose service: `docker compose … restart <service>`. */
    service: z.string().regex(COMPOSE_SERVICE, { error: 'must start with a letter or digit and use only letters, digits, "_", "." and "-"' }),
    /** `-f <file>`; a full path (the command is quoted, so `~` would not expand). */
    file: z
      .string()
      .min(1, { error: 'file must not be empty' })
      .max(1024)
      .refine((f) => !/[\0\n\r]/.test(f), { error: 'file must be one line' })
      .refine((f) => !f.startsWith('-'), { error: 'file must not start with "-"' })
      .refine((f) => !f.startsWith('~'), { error: 'write the full path: the command is shell-quoted, so "~" is not expanded' })
      .optional(),
    /** `-p <project>`. */
    project: z.string().regex(COMPOSE_PROJECT, { error: 'must be lowercase letters, digits, "_" and "-", starting with a letter or digit' }).optional(),
  })
  .strict();

export const LifecycleConfigSchema = z
  .object({
    /**
     * Default: vllm-sleep for vllm, llama-server for llama-server, ssh-command for sglang, tei and openai. `llama-router`:
     * a llama-server in router mode (wake = POST /models/load, sleep = POST /models/unload).
     */
    driver: z
      .enum(['vllm-sleep', 'router', 'ssh-command', 'llama-server', 'llama-router'], { error: 'must be one of: vllm-sleep, router, ssh-command, llama-server, llama-router' })
      .optional(),
    /** Front-door router admin API (driver: router), e.g. http://127.0.0.1:9000/admin. */
    routerBaseUrl: z
      .url({ protocol: /^https?$/, error: 'must be an http(s) URL' })
      .refine((u) => isLoopbackUrl(u), {
        error: 'must be on this machine (127.0.0.1, ::1 or localhost): the console calls upstreams only through its own SSH tunnels or loopback; forward a remote router with a tunnel',
      })
      .optional(),
    /** Overrides the service's restartCommand for lifecycle restarts; `{service}`, `{model}`, `{host}`, `{port}` are filled shell-quoted. */
    restartCommand: z.string().trim().min(1, { error: 'restartCommand must not be empty' }).optional(),
    /**
     * Restart by systemd: `sudo -n systemctl restart <unit>` (`systemctl --user restart <unit>`
     * with systemdUser). Used when no restartCommand is given.
     */
    systemdUnit: z
      .string()
      .regex(SYSTEMD_UNIT, { error: 'must be a unit name such as llama-server.service (letters, digits, ":", "_", ".", "@", "-"; not starting with "-")' })
      .refine((u) => !OTHER_UNIT_TYPES.test(u), { error: 'restart a .service unit (this names another unit type)' })
      .optional(),
    /** The unit is a user unit (`systemctl --user`, no sudo). */
    systemdUser: z.boolean().optional(),
    /** Restart by docker compose: `docker compose [-f file] [-p project] restart <service>`. Used when no restartCommand is given. */
    compose: ComposeRestartSchema.optional(),
    /**
     * Prefix the generated restart with `sudo -n` (never prompts: a sudo that wants a
     * password fails at once instead of waiting for a terminal that is not there).
     * Default: true for a system unit, false for compose and user units.
     */
    useSudo: z.boolean().optional(),
    /** Sleep level used by "sleep" (offload always discards weights, level 2). */
    sleepLevel: z.union([z.literal(1), z.literal(2)]).default(1),
    /** Policies only propose. 0 turns one off. */
    idleSleepMinutes: intRange(0, 10_080).default(15),
    idleOffloadMinutes: intRange(0, 43_200).default(180),
    stuckSeconds: intRange(0, 86_400).default(120),
    healthFailures: intRange(0, 1000).default(5),
    wakeOnDemand: z.boolean().default(true),
  })
  .strict()
  .superRefine((lc, ctx) => {
    // Two ways to restart written in one block: which one the operator means is a guess, so say so.
    if (lc.systemdUnit !== undefined && lc.compose !== undefined) {
      ctx.addIssue({ code: 'custom', path: ['compose'], message: 'give systemdUnit or compose, not both' });
    }
    if (lc.restartCommand !== undefined && (lc.systemdUnit !== undefined || lc.compose !== undefined)) {
      ctx.addIssue({ code: 'custom', path: [lc.systemdUnit !== undefined ? 'systemdUnit' : 'compose'], message: 'restartCommand is given too and would win; keep one of them' });
    }
    if (lc.systemdUser !== undefined && lc.systemdUnit === undefined) {
      ctx.addIssue({ code: 'custom', path: ['systemdUser'], message: 'systemdUser needs systemdUnit' });
    }
    if (lc.systemdUser === true && lc.useSudo === true) {
      ctx.addIssue({ code: 'custom', path: ['useSudo'], message: 'a user unit is restarted as the SSH user (systemctl --user), not with sudo' });
    }
    if (lc.useSudo !== undefined && lc.systemdUnit === undefined && lc.compose === undefined) {
      ctx.addIssue({ code: 'custom', path: ['useSudo'], message: 'useSudo applies to systemdUnit or compose; write sudo into restartCommand instead' });
    }
  });

export const ServiceConfigSchema = z
  .object({
    id: z.string().regex(SERVICE_ID, {
      error: 'must start with a letter or digit and use only letters, digits, "_" and "-" (at most 63)',
    }),
    kind: ServiceKindSchema,
    /** GET path whose 2xx answer means up (kinds sglang, tei, openai; default /health, or /v1/models for openai). */
    healthPath: HealthPathSchema.optional(),
    /** Where the tunnel leads on the host: a host name or an IP address, as `host`. */
    remoteHost: grammar(hostProblem).transform(unbracketHost).default('127.0.0.1'),
    remotePort: PortSchema,
    localPort: PortSchema.optional(),
    model: z.string().trim().min(1, { error: 'model must not be empty' }),
    aliases: z.array(z.string().trim().min(1, { error: 'alias must not be empty' })).default([]),
    slots: intRange(1, 1024).default(4),
    restartCommand: z.string().trim().min(1, { error: 'restartCommand must not be empty' }).optional(),
    /** How wake / sleep / offload / restart are done for this service, and the policies that propose them. */
    lifecycle: LifecycleConfigSchema.optional(),
    logs: LogSourceSchema.optional(), // where its log lines come from; default from lifecycle.systemdUnit / lifecycle.compose (logs/sources.ts)
    logWatch: z.boolean({ error: 'must be true or false' }).optional(), // read its log for failure lines (log_failure alerts); default true where it has a log source
  })
  .strict()
  .superRefine((s, ctx) => {
    for (const issue of serviceKindIssues(s)) ctx.addIssue({ code: 'custom', ...issue });
  });


export const GpuConfigSchema = z
  .object({
    model: z.string().trim().min(1, { error: 'model must not be empty' }),
    count: z.number().int({ error: 'must be a whole number' }).min(1, { error: 'must be at least 1' }),
  })
  .strict();

/** How a host's GPU figures are read: `auto` tries nvidia-smi, then amd-smi, then rocm-smi, then the amdgpu sysfs files. */
export const GpuToolSchema = z.enum(['auto', 'nvidia-smi', 'amd-smi', 'rocm-smi', 'amd-sysfs', 'none'], {
  error: 'must be one of: auto, nvidia-smi, amd-smi, rocm-smi, amd-sysfs, none',
});
export const TelemetrySourceKindSchema = z.enum(['ssh', 'prometheus'], { error: 'must be one of: ssh, prometheus' });

/**
 * Where a fleet that already runs Prometheus keeps its series. Label matchers
 * pick one host's and one service's series: `{host}`, `{service}`, `{model}`,
 * `{port}` are replaced (the value is escaped for a PromQL string, and for a
 * regex after `=~` / `!~`). Write matchers without braces: `job="dcgm",Hostname="{host}"`.
 */
const prometheusFields = {
  url: z.url({ protocol: /^https?$/, error: 'must be an http(s) URL' }),
  /** Deadline per query (also sent to Prometheus as the query's timeout). */
  timeoutMs: intRange(100, 60_000),
  /** Samples older than this (Prometheus stopped scraping the target) make the figures stale. */
  staleAfterMs: intRange(1_000, 3_600_000),
  /** Matchers selecting a host's series (GPU exporters). Default: `host="{host}"`. */
  hostMatch: z.string().trim().min(1, { error: 'hostMatch must not be empty' }).max(500),
  /** Matchers selecting a service's series (the scraped vLLM / llama-server). Default: `host="{host}",service="{service}"`. */
  serviceMatch: z.string().trim().min(1, { error: 'serviceMatch must not be empty' }).max(500),
  /** The label holding the GPU index on GPU series (DCGM exporter: `gpu`). */
  gpuLabel: z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, { error: 'must be a Prometheus label name' }),
};

export const PrometheusSourceConfigSchema = z
  .object({
    url: prometheusFields.url,
    timeoutMs: prometheusFields.timeoutMs.default(3_000),
    staleAfterMs: prometheusFields.staleAfterMs.default(120_000),
    hostMatch: prometheusFields.hostMatch.default('host="{host}"'),
    serviceMatch: prometheusFields.serviceMatch.default('host="{host}",service="{service}"'),
    gpuLabel: prometheusFields.gpuLabel.default('gpu'),
  })
  .strict();

/** A host's override of the fleet-wide block: no defaults, so only the fields it names replace the fleet's. */
export const PrometheusSourceOverrideSchema = z.object(prometheusFields).partial().strict();

export const HostTelemetryConfigSchema = z
  .object({
    gpu: GpuToolSchema.default('auto'),
    /** Overrides the fleet-wide `telemetry.source` for this host. */
    source: TelemetrySourceKindSchema.optional(),
    /** Overrides parts of the fleet-wide `telemetry.prometheus` for this host. */
    prometheus: PrometheusSourceOverrideSchema.optional(),
    /** `auto`: one collector exec a poll where the host runs POSIX sh with curl, else tunnels; `tunnels`: always through the tunnels. */
    read: z.enum(['auto', 'tunnels']).optional(),
  })
  .strict();

/** Operator-defined tags of a host (`region: kl`, `rack: r2`): shown, searched and grouped by in the fleet overview. */
export const HOST_TAGS_MAX = 16;
const TAG_KEY = /^[A-Za-z][A-Za-z0-9_.-]{0,31}$/;
// Printable text only: a tag is shown and searched, never a path or a command; no control or format characters.
const TAG_VALUE = /^[^\p{Cc}\p{Cf}\p{Zl}\p{Zp}]{1,64}$/u;
export const HostTagsSchema = z
  .record(
    z.string(),
    z.string({ error: 'a tag value must be text' }).regex(TAG_VALUE, { error: 'a tag value must be 1 to 64 printable characters' }),
  )
  .superRefine((tags, ctx) => {
    const names = Object.keys(tags);
    for (const name of names) {
      if (!TAG_KEY.test(name)) ctx.addIssue({ code: 'custom', path: [name], message: 'a tag name must start with a letter and use only letters, digits, ".", "_" and "-" (at most 32)' });
    }
    if (names.length > HOST_TAGS_MAX) ctx.addIssue({ code: 'custom', message: `at most ${HOST_TAGS_MAX} tags per host, got ${names.length}` });
  });

export const HostConfigSchema = z
  .object({
    label: z.string().regex(LABEL, {
      error: 'must start with a letter or digit and use only letters, digits, ".", "_" and "-" (at most 63)',
    }),
    ssh: SshConfigSchema,
    /** `~/` is expanded by parseConfig; the default is the user's own known_hosts. */
    knownHostsFile: pathField().default('~/.ssh/known_hosts'),
    gpu: GpuConfigSchema.optional(),
    pricePerHourUsd: z.number().min(0, { error: 'must be 0 or more' }).optional(),
    /** This host's monthly budget (USD); the UI may override it. */
    monthlyBudgetUsd: z.number({ error: 'must be a number' }).positive({ error: 'must be more than 0' }).max(1e9, { error: 'must be at most 1000000000' }).optional(),
    services: z.array(ServiceConfigSchema).default([]),
    /** GPU tool and telemetry source of this host. */
    telemetry: HostTelemetryConfigSchema.optional(),
    health: HealthConfigSchema.optional(), // host health polling; each field overrides the fleet-wide `health`
    alerts: HostAlertsConfigSchema.optional(), // this host's alert thresholds over the fleet-wide `alerts` (config/alerts-schema.ts)
    tags: HostTagsSchema.optional(),
  })
  .strict();

export const TelemetryConfigSchema = z
  .object({
    pollIntervalMs: intRange(250, 60_000).default(1000),
    /** `ssh`: the console scrapes through its own tunnels; `prometheus`: it reads an existing Prometheus instead. */
    source: TelemetrySourceKindSchema.default('ssh'),
    prometheus: PrometheusSourceConfigSchema.optional(),
  })
  .strict()
  .refine((t) => t.source !== 'prometheus' || t.prometheus !== undefined, {
    error: 'source: prometheus needs telemetry.prometheus.url',
    path: ['prometheus'],
  });

export const ListenConfigSchema = z.object({ port: ListenPortSchema.default(0) }).strict();

export const ConfigSchema = z
  .object({
    hosts: z.array(HostConfigSchema).default([]),
    telemetry: TelemetryConfigSchema.prefault({}),
    health: HealthConfigSchema.optional(), // fleet-wide host health settings (config/health-schema.ts)
    alerts: AlertsConfigSchema.optional(), // fleet-wide alert thresholds (config/alerts-schema.ts)
    proxy: ProxyConfigSchema.prefault({}),
    ui: ListenConfigSchema.prefault({}),
    /** Fleet-wide SSH defaults: the transport a host without its own `ssh.transport` uses, and the OpenSSH client. */
    ssh: z
      .object({
        transport: SshTransportSchema.default('auto'),
        /** The OpenSSH client for the openssh transport; default `ssh` on PATH. */
        binary: z.string().min(1, { error: 'binary must not be empty' }).optional(),
      })
      .strict()
      .prefault({}),
    /** The fleet's monthly budget (USD); the UI may override it. */
    budget: z
      .object({ monthlyUsd: z.number({ error: 'must be a number' }).positive({ error: 'must be more than 0' }).max(1e9, { error: 'must be at most 1000000000' }) })
      .strict()
      .optional(),
    /** Outside channels (Slack, Zulip, ntfy, signed webhook); secrets by reference into the secret store. */
    notifications: NotifyConfigSchema.optional(),
    /**
     * `simulated: true`: these hosts are simulated (the demo fleet writes it into the config it hands over),
     * so the UI and every evidence report say their figures do not come from real hosts.
     */
    fleet: z.object({ simulated: z.boolean({ error: 'must be true or false' }).default(false) }).strict().prefault({}),
  })
  .strict()
  .superRefine((config, ctx) => {
    for (const issue of crossFieldIssues(config)) ctx.addIssue({ code: 'custom', ...issue });
  });

export type SshConfig = z.infer<typeof SshConfigSchema>;
export type SshTransport = z.infer<typeof SshTransportSchema>;
export type ServiceConfig = z.infer<typeof ServiceConfigSchema>;
export type LifecycleConfig = z.infer<typeof LifecycleConfigSchema>;
export type GpuConfig = z.infer<typeof GpuConfigSchema>;
export type GpuTool = z.infer<typeof GpuToolSchema>;
export type PrometheusSourceConfig = z.infer<typeof PrometheusSourceConfigSchema>;
export type PrometheusSourceOverride = z.infer<typeof PrometheusSourceOverrideSchema>;
export type HostTelemetryConfig = z.infer<typeof HostTelemetryConfigSchema>;
export type TelemetryConfig = z.infer<typeof TelemetryConfigSchema>;
export type HostConfig = z.infer<typeof HostConfigSchema>;
export type Config = z.infer<typeof ConfigSchema>;
export type ProxyConfig = z.infer<typeof ProxyConfigSchema>;
export type ProxyUpstreamConfig = z.infer<typeof ProxyUpstreamConfigSchema>;
/** What a person or code may write before defaults are filled in. */
export type ConfigInput = z.input<typeof ConfigSchema>;

type Path = (string | number)[];

/** Uniqueness rules zod cannot express per field; each issue points at the second occurrence. */
function crossFieldIssues(config: Config): { path: Path; message: string }[] {
  const issues: { path: Path; message: string }[] = [];
  const where = (p: Path) => p.map((s, i) => (typeof s === 'number' ? `[${s}]` : i === 0 ? s : `.${s}`)).join('');

  const labels = new Map<string, Path>();
  const ports = new Map<number, Path>();
  const names = new Map<string, { path: Path; owner: string; model: string }>();

  const claimPort = (port: number, path: Path) => {
    const first = ports.get(port);
    if (first) issues.push({ path, message: `port ${port} is already used by ${where(first)}` });
    else ports.set(port, path);
  };
  if (config.proxy.port !== 0) claimPort(config.proxy.port, ['proxy', 'port']);
  if (config.ui.port !== 0) claimPort(config.ui.port, ['ui', 'port']);

  config.hosts.forEach((host, h) => {
    const source = host.telemetry?.source ?? config.telemetry.source;
    if (source === 'prometheus' && (host.telemetry?.prometheus?.url ?? config.telemetry.prometheus?.url) === undefined) {
      issues.push({ path: ['hosts', h, 'telemetry', 'source'], message: 'source: prometheus needs a url (telemetry.prometheus.url, or this host\'s telemetry.prometheus.url)' });
    }
    const labelKey = host.label.toLowerCase();
    const firstLabel = labels.get(labelKey);
    if (firstLabel) issues.push({ path: ['hosts', h, 'label'], message: `duplicate host label "${host.label}" (first at ${where(firstLabel)})` });
    else labels.set(labelKey, ['hosts', h, 'label']);

    const ids = new Map<string, Path>();
    host.services.forEach((service, s) => {
      const base: Path = ['hosts', h, 'services', s];
      const idKey = service.id.toLowerCase();
      const firstId = ids.get(idKey);
      if (firstId) issues.push({ path: [...base, 'id'], message: `duplicate service id "${service.id}" on host ${host.label} (first at ${where(firstId)})` });
      else ids.set(idKey, [...base, 'id']);

      if (service.localPort !== undefined) claimPort(service.localPort, [...base, 'localPort']);
      const lc = service.lifecycle;
      if (service.restartCommand !== undefined && lc !== undefined && lc.restartCommand === undefined && (lc.systemdUnit !== undefined || lc.compose !== undefined)) {
        issues.push({
          path: [...base, 'lifecycle', lc.systemdUnit !== undefined ? 'systemdUnit' : 'compose'],
          message: `restartCommand (${where([...base, 'restartCommand'])}) is given too and would win; keep one of them`,
        });
      }

      // Model names and aliases route requests, so each must lead to one service.
      const owner = upstreamKey(host.label, service.id);
      const candidates: [string, Path][] = [
        [service.model, [...base, 'model']],
        ...service.aliases.map((a, i): [string, Path] => [a, [...base, 'aliases', i]]),
      ];
      // A name may be shared only by replicas: services that serve the same model.
      for (const [name, path] of candidates) {
        const key = name.toLowerCase();
        const first = names.get(key);
        if (!first) names.set(key, { path, owner, model: service.model });
        else if (first.owner !== owner && first.model.toLowerCase() !== service.model.toLowerCase()) {
          issues.push({
            path,
            message: `model name "${name}" is already served by ${first.owner} as model "${first.model}" (${where(first.path)}); a second service may share a name only as a replica of the same model`,
          });
        }
        // A service repeating its own model name as an alias is redundant but unambiguous.
      }
    });
  });
  issues.push(...groupIssues(config, new Set(names.keys())));
  issues.push(...clientLimitIssues(config.proxy.clients, new Map([...names].map(([k, v]) => [k, v.model])), new Map(Object.entries(config.proxy.groups).map(([g, m]) => [g.toLowerCase(), m])), pricedModels(config)));
  issues.push(...modelShapingIssues(config.proxy.models, new Map([...names].map(([k, v]) => [k, v.model]))));
  issues.push(...alertModelIssues(config.alerts, new Set(config.hosts.flatMap((h) => h.services.map((s) => s.model.toLowerCase())))));
  return issues;
}

/** Group aliases: one name each (case-insensitively), no clash with a served name, every member known, no cycle. */
function groupIssues(config: Config, served: ReadonlySet<string>): { path: Path; message: string }[] {
  const issues: { path: Path; message: string }[] = [];
  // Names match case-insensitively, so "Fast" and "fast" would be one name: the second would be ignored unseen.
  const groups = new Map<string, { name: string; members: string[] }>();
  for (const [name, members] of Object.entries(config.proxy.groups)) {
    const first = groups.get(name.toLowerCase());
    if (first) issues.push({ path: ['proxy', 'groups', name], message: `duplicate group name "${name}" (first at proxy.groups.${first.name}); group names match in any case` });
    else groups.set(name.toLowerCase(), { name, members });
  }
  for (const { name, members } of groups.values()) {
    if (served.has(name.toLowerCase())) {
      issues.push({ path: ['proxy', 'groups', name], message: `group "${name}" has the name of a served model or alias; give the group its own name` });
    }
    members.forEach((m, i) => {
      const key = m.toLowerCase();
      if (!served.has(key) && !groups.has(key)) issues.push({ path: ['proxy', 'groups', name, i], message: `"${m}" is neither a served model or alias nor a group` });
      else if (members.findIndex((x) => x.toLowerCase() === key) !== i) issues.push({ path: ['proxy', 'groups', name, i], message: `"${m}" is listed twice in group "${name}"` });
    });
  }
  // A cycle: following group members from a group leads back to it. The issue points at the member that closes it.
  const state = new Map<string, 'visiting' | 'done'>();
  const visit = (key: string, trail: string[], at: Path): void => {
    const g = groups.get(key);
    if (!g || state.get(key) === 'done') return;
    if (state.get(key) === 'visiting') {
      const start = trail.indexOf(g.name);
      const cycle = [...trail.slice(start), g.name].join(' → ');
      issues.push({ path: at, message: `fallback cycle: ${cycle}` });
      return;
    }
    state.set(key, 'visiting');
    g.members.forEach((m, i) => visit(m.toLowerCase(), [...trail, g.name], ['proxy', 'groups', g.name, i]));
    state.set(key, 'done');
  };
  for (const key of groups.keys()) visit(key, [], []);
  return issues;
}

/** 127.0.0.0/8, ::1 or localhost: the console's own machine (its tunnels listen there too); base's on-prem rule. */
export function isLoopbackUrl(raw: string): boolean {
  return isOnPremUrl(raw);
}
