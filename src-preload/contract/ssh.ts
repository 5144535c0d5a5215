import { z } from 'zod';
import { HostLabelSchema, ServiceIdSchema } from './primitives.js';
import { HostConnectionStateSchema, TunnelTestResultSchema } from './fleet.js';

// Contract channels of the ssh capability, merged into the channel table in channels.ts.
// Trust decisions, passphrases, reconnect-now, tunnel tests and the
// ~/.ssh/config import. A passphrase goes in and never comes back out.

const Label = HostLabelSchema;
const Fingerprint = z.string().regex(/^SHA256:[A-Za-z0-9+/]{43}$/, { error: 'must be a SHA256:… fingerprint' });
const HostState = z.object({ label: z.string(), state: HostConnectionStateSchema }).strict();

export const SshConfigIssueSchema = z
  .object({
    /** The included file the line is in; null for the file read first. */
    file: z.string().nullable(),
    line: z.number().int(),
    directive: z.string(),
    severity: z.enum(['info', 'warning']),
    message: z.string(),
  })
  .strict();

export const ImportedHostSchema = z
  .object({
    alias: z.string(),
    label: z.string(),
    host: z.string(),
    port: z.number().int(),
    user: z.string(),
    identityFile: z.string().nullable(),
    agent: z.boolean(),
    jumpHost: z.string().nullable(),
    knownHostsFile: z.string().nullable(),
    keepaliveIntervalMs: z.number().int().nullable(),
    /** What only the openssh transport reads for this host; empty: the builtin one reads it all. */
    openssh: z.array(z.string()),
    configHost: z.string().nullable(),
    notes: z.array(z.string()),
    /** The ids of the preview's `commands` that apply to this host: the apply needs each acknowledged. */
    commands: z.array(z.string()),
    /** A host with this label is already in the config: applying skips it. */
    exists: z.boolean(),
  })
  .strict();
export type ImportedHostView = z.infer<typeof ImportedHostSchema>;

const SkippedSchema = z.object({ alias: z.string(), reason: z.string() }).strict();

const CommandId = z.string().regex(/^cmd-\d{1,6}$/, { error: 'must be the id of a command line of the preview (cmd-N)' });

/**
 * A line of the file that makes ssh run something on this computer (ProxyCommand, Match exec, LocalCommand,
 * PermitLocalCommand, KnownHostsCommand, PKCS11Provider, SecurityKeyProvider), shown as written: the
 * operator acknowledges each before its hosts are added. Never run or evaluated by the preview.
 */
export const SshConfigCommandSchema = z
  .object({
    id: CommandId,
    directive: z.string(),
    /** The line's value as written (control characters as visible escapes). */
    text: z.string(),
    /** The included file it is in; null for the file read first. */
    file: z.string().nullable(),
    line: z.number().int(),
    /** Labels of the previewed hosts it applies to. */
    hosts: z.array(z.string()),
    /** Whether ssh will run it once these hosts are added, and why (not), in words. */
    effect: z.string(),
  })
  .strict();
export type SshConfigCommand = z.infer<typeof SshConfigCommandSchema>;

export const SshConfigPreviewSchema = z
  .object({
    /** Names what was read for an apply of exactly this preview (kept in main for a while). */
    previewId: z.string(),
    /** What was read, as the operator would name it: a path main chose, or "<name> (uploaded)". */
    file: z.string(),
    /** Every file read (the config and its Includes); empty for uploaded content. */
    files: z.array(z.string()),
    hosts: z.array(ImportedHostSchema),
    /** Hosts of the file that are not offered, each with why (a value not of the config's grammar names its field and line). */
    skipped: z.array(SkippedSchema),
    issues: z.array(SshConfigIssueSchema),
    commands: z.array(SshConfigCommandSchema),
    /** The YAML config file applying would write to. */
    configFile: z.string(),
  })
  .strict();
export type SshConfigPreview = z.infer<typeof SshConfigPreviewSchema>;

export const SshConfigApplyResultSchema = z
  .object({
    configFile: z.string(),
    added: z.array(z.string()),
    skipped: z.array(SkippedSchema),
    /** True when the running console loaded the new hosts at once. */
    reloaded: z.boolean(),
    note: z.string().nullable(),
  })
  .strict();
export type SshConfigApplyResult = z.infer<typeof SshConfigApplyResultSchema>;

/**
 * Where the ssh config comes from. Never a path from the renderer: main reads ~/.ssh/config itself (with
 * its Includes), or asks the operator to choose a file in the desktop shell's native dialog, or gets the
 * text of a file the operator chose in the browser.
 */
export const SshConfigSourceSchema = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('default') }).strict(),
  z.object({ kind: z.literal('dialog') }).strict(),
  z
    .object({
      kind: z.literal('content'),
      /** The chosen file's name, for display only (never opened). */
      name: z.string().min(1).max(255),
      text: z.string().max(1024 * 1024),
    })
    .strict(),
]);
export type SshConfigSource = z.infer<typeof SshConfigSourceSchema>;
const PreviewId = z.string().regex(/^[A-Za-z0-9_-]{8,64}$/, { error: 'must be the previewId of a preview' });

export const sshInvokeChannels = {
  /** Drop the link (or the pending retry) and connect at once, backoff reset. */
  'hosts.reconnect': { input: z.object({ label: Label }).strict(), output: HostState },
  /** Confirm the host key the host is waiting on (audited); with nothing pending, pre-trust a fingerprint read out of band. */
  'hosts.trust': { input: z.object({ label: Label, fingerprint: Fingerprint }).strict(), output: HostState },
  /** Refuse the host key the host is waiting on (audited); the host stops. */
  'hosts.refuseTrust': { input: z.object({ label: Label, fingerprint: Fingerprint }).strict(), output: HostState },
  /**
   * Forget the key this console trusts for the host (e.g. after a reinstall shows HOST KEY CHANGED):
   * the old fingerprint and the host label typed; audited; the host then waits for the new key's confirmation.
   */
  'hosts.forgetTrust': {
    input: z.object({ label: Label, fingerprint: Fingerprint, typedLabel: z.string().min(1).max(64) }).strict(),
    output: HostState,
  },
  /** The passphrase of the host's encrypted key; kept in main memory only, never stored or echoed. */
  'hosts.passphrase': { input: z.object({ label: Label, passphrase: z.string().min(1).max(1024) }).strict(), output: HostState },
  /** Decline the question the host asks right now (keyboard-interactive, openssh): the login fails saying so; audited. */
  'hosts.declinePrompt': { input: z.object({ label: Label }).strict(), output: HostState },
  /** GET /v1/models then a 1-token chat through the tunnel; result and latency are shown and audited. */
  'tunnels.test': {
    input: z.object({ label: Label, serviceId: ServiceIdSchema }).strict(),
    output: TunnelTestResultSchema,
  },
  /**
   * Read an OpenSSH client config into inventory hosts, without writing anything. Null: the operator
   * closed the file dialog without choosing.
   */
  'hosts.importPreview': { input: z.object({ source: SshConfigSourceSchema }).strict(), output: SshConfigPreviewSchema.nullable() },
  /**
   * Add the chosen hosts of a preview to the YAML config file and reload it (audited). Every command line of
   * the preview that applies to a chosen host must be in `acknowledgedCommands`, or nothing is written.
   */
  'hosts.importApply': {
    input: z
      .object({
        previewId: PreviewId,
        labels: z.array(z.string().min(1).max(64)).min(1).max(500),
        acknowledgedCommands: z.array(CommandId).max(10_000).optional(),
      })
      .strict(),
    output: SshConfigApplyResultSchema,
  },
} as const;

export const sshEventChannels = {} as const;
