// Where a service's log lines come from (`services[].logs`). Each value ends
// up as ONE shell-quoted argument of a command the console builds, so these
// rules are for the operator's sake (a clear error at load) and defence in
// depth; they are not what keeps a value from becoming shell.
import { z } from 'zod';

// As journalctl and systemctl take unit names (globs and escapes aside); no leading "-".
const UNIT = /^[A-Za-z0-9][A-Za-z0-9:_.@\\-]{0,250}$/;
// Docker's container names (and ids).
const CONTAINER = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$/;
const COMPOSE_SERVICE = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$/;
const COMPOSE_PROJECT = /^[a-z0-9][a-z0-9_-]{0,127}$/;

/** A full path on the host: one line, absolute (the command is quoted, so `~` would not expand). */
const hostPath = (what: string) =>
  z
    .string()
    .min(1, { error: `${what} must not be empty` })
    .max(1024, { error: `${what} must be at most 1024 characters` })
    .refine((p) => !/[\0\n\r]/.test(p), { error: `${what} must be one line` })
    .refine((p) => p.startsWith('/'), { error: `${what} must be a full path starting with "/" (the command is shell-quoted: "~" and relative paths are not expanded)` });

const unit = z.string().regex(UNIT, { error: 'must be a unit name such as llama-server.service (letters, digits, ":", "_", ".", "@", "\\", "-"; not starting with "-")' });
const template = (what: string) => z.string().trim().min(1, { error: `${what} must not be empty` }).max(2000, { error: `${what} must be at most 2000 characters` });

export const JournalLogSourceSchema = z.union([
  unit,
  z
    .object({
      unit,
      /** A user unit: `journalctl --user --unit=…` (the SSH user's own journal). */
      user: z.boolean().optional(),
    })
    .strict(),
]);

export const ComposeLogSourceSchema = z
  .object({
    service: z.string().regex(COMPOSE_SERVICE, { error: 'must start with a letter or digit and use only letters, digits, "_", "." and "-"' }),
    /** `-f <file>` each, in order. */
    files: z.array(hostPath('file')).min(1).max(8).optional(),
    /** `-p <project>`. */
    project: z.string().regex(COMPOSE_PROJECT, { error: 'must be lowercase letters, digits, "_" and "-", starting with a letter or digit' }).optional(),
    /** `--project-directory <dir>`. */
    projectDirectory: hostPath('projectDirectory').optional(),
    /** Run as `sudo -n docker …` (never prompts). */
    sudo: z.boolean().optional(),
  })
  .strict();

export const DockerLogSourceSchema = z.union([
  z.string().regex(CONTAINER, { error: 'must be a container name or id (letters, digits, "_", "." and "-", not starting with "-")' }),
  z
    .object({
      container: z.string().regex(CONTAINER, { error: 'must be a container name or id (letters, digits, "_", "." and "-", not starting with "-")' }),
      sudo: z.boolean().optional(),
    })
    .strict(),
]);

/**
 * A command the host runs to print the log: `{service}`, `{host}`, `{model}`, `{port}`, `{lines}` and `{since}`
 * (ISO 8601) are filled shell-quoted, as restart templates are. A string is the tail command; `follow` a
 * command that keeps printing (`vllmctl logs -f {service}`).
 */
export const CommandLogSourceSchema = z.union([
  template('command'),
  z
    .object({ tail: template('tail'), follow: template('follow').optional() })
    .strict(),
]);

const KINDS = ['journal', 'compose', 'docker', 'file', 'command'] as const;

/** Exactly one of the kinds (an object of optional keys rather than a union, so a bad value is named by its own path). */
export const LogSourceSchema = z
  .object({
    journal: JournalLogSourceSchema.optional(),
    compose: ComposeLogSourceSchema.optional(),
    docker: DockerLogSourceSchema.optional(),
    file: hostPath('file').optional(),
    command: CommandLogSourceSchema.optional(),
  })
  .strict()
  .superRefine((src, ctx) => {
    const given = KINDS.filter((k) => src[k] !== undefined);
    if (given.length !== 1) {
      ctx.addIssue({
        code: 'custom',
        message: given.length === 0 ? `give one of: ${KINDS.join(', ')}` : `give one source, not ${given.join(' and ')}`,
      });
    }
  });
export type LogSourceConfig = z.infer<typeof LogSourceSchema>;
