// How a host's health is read (`health:` fleet-wide, `hosts[].health` per
// host): how often, how often the model cache is measured, and which folders
// are the model cache. Each path ends up as ONE shell-quoted argument of the
// health command (fleet/host-health-command.ts), so these rules are for the
// operator's sake (a clear error at load), not what keeps a value from being shell.
import { z } from 'zod';
import { intRange } from './number-fields.js';

/** `/abs/path`, or `~` / `~/…` (expanded by the host's own shell from $HOME, never here). */
const cachePath = z
  .string()
  .min(1, { error: 'a model cache path must not be empty' })
  .max(1024, { error: 'a model cache path must be at most 1024 characters' })
  .refine((p) => !/[\0\n\r]/.test(p), { error: 'a model cache path must be one line' })
  .refine((p) => p.startsWith('/') || p === '~' || p.startsWith('~/'), { error: 'a model cache path must start with "/" or "~/" (~ is the SSH user\'s home on the host)' });

export const HealthConfigSchema = z
  .object({
    /** Disk, memory, load, uptime and the process table; default 15 s. `0` turns host health off. */
    intervalMs: z.union([z.literal(0), intRange(5_000, 3_600_000)]).optional(),
    /** How often the model cache folders are measured with `du` (low priority); default 10 min. */
    cacheSizeIntervalMs: intRange(60_000, 86_400_000).optional(),
    /** Deadline of one `du` (seconds); a cache it cannot measure in time reads unknown. Default 60. */
    cacheSizeTimeoutS: intRange(5, 600).optional(),
    /** How Xid events are read: `auto` (journalctl -k, else dmesg), one of them only, or `off`. */
    kernelLog: z.enum(['auto', 'journalctl', 'dmesg', 'off'], { error: 'kernelLog must be auto, journalctl, dmesg or off' }).optional(),
    /** The model cache folder(s); default `~/.cache/huggingface`. */
    modelCache: z.array(cachePath).min(1, { error: 'modelCache needs at least one path' }).max(8, { error: 'at most 8 model cache paths' }).optional(),
  })
  .strict();

export type HealthConfig = z.infer<typeof HealthConfigSchema>;
