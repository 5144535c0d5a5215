import { execFile, execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AppError } from '../../../src-main/core/base/index.js';
import { ConfigSchema } from '../../../src-main/core/config/index.js';
import { generatedConfig, type GeneratedConfigInput } from '../../../src-main/core/ssh/openssh-config.js';
import { HAVE_SSHD, startLoopbackSshd, type Sshd } from '../../helpers/sshd.js';
import { HAVE_OPENSSH } from '../../helpers/ssh-tools.js';

// Issue #26: every value that reaches the openssh transport's generated
// config or ssh's command line is data. Hostile values (quotes, $(), backticks,
// %-tokens, backslash escapes, line breaks) for each such field go through the
// config schema and, bypassing it, through the writer; whatever the writer
// accepts is read by the real OpenSSH client (`ssh -G`, which evaluates Match
// exec) and connected with through a ProxyJump hop to a loopback sshd (whose
// jump command ssh runs through /bin/sh). Each value carries a command that
// would create a marker file: none is ever created. A control run with the
// old writer's output shows the marker does appear when a value is pasted raw.

const HAVE = HAVE_OPENSSH && HAVE_SSHD;
// ssh lowercases a HostName before its jump command reaches the shell: the marker's path is lowercase.
const markerDir = join('/tmp', `gcfuzz${process.pid}`);
const MARKER = join(markerDir, 'm');
const dir = mkdtempSync(join(tmpdir(), 'gc-fuzz-'));
const home = join(dir, 'home');
const key = join(dir, 'client');
const knownHosts = join(dir, 'known_hosts');
const included = join(dir, 'included_config');
let sshd: Sshd | null = null;
let port = 0;
let connects = 0;
let written = 0;

const FIELDS = ['host', 'user', 'jumpHost', 'identityFile', 'certificateFile', 'knownHostsFile', 'agentSock', 'configHost', 'configFile', 'controlPath', 'helperProgram', 'configPath'] as const;
type Field = (typeof FIELDS)[number];

const PAYLOADS = [`touch ${MARKER}`, `id>${MARKER}`, `touch\${IFS}${MARKER}`];
const EMBED: ((p: string) => string)[] = [
  (p) => `$(${p})`,
  (p) => `\`${p}\``,
  (p) => `;${p};`,
  (p) => `'$(${p})'`,
  (p) => `\\'$(${p})\\'`,
  (p) => `"$(${p})"`,
  (p) => `|${p}`,
  (p) => `&&${p}&&`,
  (p) => `\n${p}\n`,
  (p) => `\nProxyCommand ${p}\n`,
  (p) => `\nMatch exec "${p}"\n`,
  (p) => `" \nMatch exec "${p}" #`,
  (p) => `\r\nLocalCommand ${p}\nPermitLocalCommand yes`,
  (p) => `%%$(${p})`,
  (p) => `\\"$(${p})\\"`,
];
// Text a path may hold as data (the writer quotes it, doubles its %): shell and ssh_config syntax, tokens.
const DATA_FRAGMENTS = ["'", '`', '$', '$(', ')', '%', '%h', '%%', '%C', '%d', ';', '|', '&', ' ', '#', '=', ',', '@', ':', '~', '-o', 'exec', '!'];
const DATA_EMBED: ((p: string) => string)[] = [(p) => `$(${p})`, (p) => `\`${p}\``, (p) => `;${p};`, (p) => `'$(${p})'`, (p) => `|${p}`, (p) => `&&${p}&&`, (p) => `%%$(${p})`, (p) => ` #$(${p})`];
const FRAGMENTS = ["'", '"', '`', '$', '$(', ')', '${HOME}', '\\', '\\\\', '%', '%h', '%%', '%C', '%d', '\n', '\r', '\t', '\0', '\u001b', ';', '|', '&', ' ', '#', '=', ',', '@', ':', '[', ']', '~', '*', '?', '-o', 'exec'];

/** The valid value each field has when another field is the one under test. */
function baseline(): { ssh: Record<string, unknown>; input: Omit<GeneratedConfigInput, 'target'> } {
  return {
    // The target is sshd's second address: ssh refuses a jump host that is the target itself ("jumphost loop").
    ssh: { host: '127.0.0.2', port, user: 'root', identityFile: key, jumpHost: `root@127.0.0.1:${port}`, transport: 'openssh' },
    input: {
      configPath: join(dir, 'cfg', 'x.conf'),
      knownHostsFile: knownHosts,
      controlPath: join(dir, 'x.ctl'),
      helperProgram: '/bin/true',
      keepaliveIntervalS: 5,
      keepaliveCountMax: 2,
      connectTimeoutS: 5,
      agentSock: null,
    },
  };
}

/** Where a hostile piece goes in each field: after a plausible start, so the value looks like the field. */
function place(field: Field, junk: string): string {
  switch (field) {
    case 'host':
      return `gpu-east.internal${junk}`;
    case 'user':
      return `ops${junk}`;
    case 'jumpHost':
      return `root@127.0.0.1:${port},root@127.0.0.1${junk}`;
    case 'configHost':
      return `gpu${junk}`;
    case 'configPath':
      return join(dir, `cfg${junk.replace(/\0/g, '')}`, 'x.conf');
    default:
      return `${dir}/p${junk}`;
  }
}

/** The config's verdict on the field (null where the field is not a config key but the console's own path). */
function schemaAccepts(field: Field, value: string): boolean | null {
  const { ssh } = baseline();
  const host: Record<string, unknown> = { label: 'fz', ssh: { ...ssh } };
  const s = host['ssh'] as Record<string, unknown>;
  if (field === 'knownHostsFile') host['knownHostsFile'] = value;
  else if (field === 'agentSock') s['identityAgent'] = value;
  else if (field === 'configHost') Object.assign(s, { configHost: value, jumpHost: undefined });
  else if (field === 'configFile') Object.assign(s, { configHost: 'gpu', configFile: value, jumpHost: undefined });
  else if (field === 'controlPath' || field === 'helperProgram' || field === 'configPath') return null;
  else s[field] = value;
  return ConfigSchema.safeParse({ hosts: [host] }).success;
}

/** The writer's input with the field set raw, as if the schema had let it through. */
function writerInput(field: Field, value: string): GeneratedConfigInput {
  const { ssh, input } = baseline();
  const target = ConfigSchema.parse({ hosts: [{ label: 'fz', ssh }] }).hosts[0]!;
  const raw = { ...target, ssh: { ...target.ssh } } as typeof target;
  const set = (k: string, v: unknown) => ((raw.ssh as Record<string, unknown>)[k] = v);
  const out: GeneratedConfigInput = { ...input, target: raw };
  if (field === 'knownHostsFile' || field === 'controlPath' || field === 'helperProgram' || field === 'configPath') out[field] = value;
  else if (field === 'agentSock') out.agentSock = value;
  else if (field === 'configHost') {
    set('configHost', value);
    set('configFile', included);
    set('jumpHost', undefined);
  } else if (field === 'configFile') {
    set('configHost', 'gpu');
    set('configFile', value);
    set('jumpHost', undefined);
  } else set(field, value);
  return out;
}

function ssh(args: string[], timeoutMs: number): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile('ssh', args, { timeout: timeoutMs, env: { PATH: process.env['PATH'], HOME: home } }, (err, stdout, stderr) => {
      resolve({ code: err ? ((err as { code?: unknown }).code as number | null) ?? null : 0, stdout, stderr });
    });
  });
}

/** What `ssh -G` must report for the field when the writer kept the value whole (its own rules on %% per keyword). */
function expectedG(field: Field, value: string): [string, string] | null {
  switch (field) {
    case 'host':
      return ['hostname', value.replace(/^\[|\]$/g, '').toLowerCase()];
    case 'user':
      return ['user', value];
    case 'identityFile':
    case 'certificateFile':
      return [field.toLowerCase(), value.replace(/%/g, '%%')];
    case 'knownHostsFile':
      return ['userknownhostsfile', value];
    case 'controlPath':
      return ['controlpath', value];
    case 'agentSock':
      return ['identityagent', value];
    default:
      return null;
  }
}

/** One value through schema, writer, `ssh -G` and (with `connect`) a real ProxyJump connection; never a marker. */
async function probe(field: Field, value: string, connect: boolean): Promise<void> {
  schemaAccepts(field, value);
  const input = writerInput(field, value);
  let text: string;
  let alias: string;
  try {
    ({ text, alias } = generatedConfig(input));
  } catch (err) {
    // A refusal is a coded error, never a crash.
    expect(err, `${field}=${JSON.stringify(value)}`).toBeInstanceOf(AppError);
    expect((err as AppError).code).toMatch(/^SSH_(CONFIG_UNSUPPORTED|JUMP_FAILED|NEEDS_OPENSSH)$/);
    return;
  }
  written++;
  mkdirSync(dirname(input.configPath), { recursive: true });
  writeFileSync(input.configPath, text);
  const g = await ssh(['-G', '-F', input.configPath, '--', alias], 5_000);
  const want = expectedG(field, value);
  expect(g.code, `ssh -G refused the config for ${field}=${JSON.stringify(value)}: ${g.stderr}`).toBe(0);
  if (want) expect(g.stdout.split('\n').find((l) => l.startsWith(`${want[0]} `)), `${field}=${JSON.stringify(value)}`).toBe(`${want[0]} ${want[1]}`);
  if (connect) {
    connects++;
    await ssh(['-F', input.configPath, '-o', 'ConnectTimeout=5', '--', alias, 'true'], 10_000);
  }
  expect(existsSync(MARKER), `${field}=${JSON.stringify(value)} wrote the marker`).toBe(false);
}

beforeAll(async () => {
  if (!HAVE) return;
  mkdirSync(markerDir, { recursive: true });
  mkdirSync(home, { recursive: true });
  execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', key]);
  // INFO: at DEBUG1 sshd writes its own lines to a session's stderr, which the harness check expects empty.
  sshd = await startLoopbackSshd({ parentDir: dir, listen: ['127.0.0.1', '127.0.0.2'], authorizedKeyFiles: [`${key}.pub`], logLevel: 'INFO' });
  port = sshd.port;
  const hostPub = sshd.hostKeyPublic;
  writeFileSync(knownHosts, `[127.0.0.1]:${port} ${hostPub}\n[127.0.0.2]:${port} ${hostPub}\n`);
  writeFileSync(included, `Host *\n  HostName 127.0.0.2\n  Port ${port}\n  User root\n  IdentityFile ${key}\n  ProxyJump root@127.0.0.1:${port}\n`);
}, 30_000);

afterAll(async () => {
  await sshd?.kill();
  rmSync(dir, { recursive: true, force: true });
  rmSync(markerDir, { recursive: true, force: true });
});

describe.skipIf(!HAVE)('values in a generated ssh config are data (fuzzed through the real OpenSSH client)', () => {
  it('the harness is live: the baseline connects through its jump hop, and a value pasted raw does write the marker', async () => {
    const input = writerInput('host', '127.0.0.2');
    const { text, alias } = generatedConfig(input);
    mkdirSync(dirname(input.configPath), { recursive: true });
    writeFileSync(input.configPath, text);
    const ok = await ssh(['-F', input.configPath, '--', alias, 'echo', 'through-the-jump'], 15_000);
    expect(ok.stderr).toBe('');
    expect(ok.stdout.trim()).toBe('through-the-jump');
    // What the old writer produced for the finding's HostName: ssh's jump command runs it.
    const raw = text.replace('HostName 127.0.0.2', `HostName gpu-east.internal\\'$(${PAYLOADS[1]})\\'`);
    writeFileSync(input.configPath, raw);
    await ssh(['-F', input.configPath, '--', alias, 'true'], 10_000);
    expect(existsSync(MARKER)).toBe(true);
    rmSync(MARKER);
  }, 30_000);

  it('hand-picked values for every field: refused with a code, or written so that ssh reads exactly them and runs nothing', async () => {
    const picked: [Field, string][] = [
      ['host', "gpu-east.internal\\'$(id>" + MARKER + ")\\'"],
      ['host', "x'$(touch " + MARKER + ")'"],
      ['host', '-oProxyCommand=touch ' + MARKER],
      ['host', '%h%%$(touch ' + MARKER + ')'],
      ['host', '[::1]'],
      ['host', 'proj_gpu_1'],
      ['user', "ops'$(touch " + MARKER + ")'"],
      ['user', 'root`touch ' + MARKER + '`'],
      ['jumpHost', `root@127.0.0.1:${port},root@127.0.0.1$(touch${'${IFS}'}${MARKER})`],
      ['jumpHost', `root;touch ${MARKER};@127.0.0.1:${port}`],
      ['jumpHost', `root@[::1]:${port}`],
      ['identityFile', `/tmp/k\nProxyCommand touch ${MARKER}`],
      ['identityFile', `/tmp/k" \nMatch exec "touch ${MARKER}`],
      ['identityFile', `/tmp/it's a key #1 %d $(touch ${MARKER})`],
      ['knownHostsFile', `/tmp/kh\r\nMatch exec "touch ${MARKER}"`],
      ['knownHostsFile', '/tmp/50%h/${HOME}'],
      ['certificateFile', `/tmp/c\\"\nMatch exec "touch ${MARKER}"\\"`],
      ['agentSock', `/tmp/a\nMatch exec "touch ${MARKER}"`],
      ['agentSock', '$SSH_AUTH_SOCK'],
      ['configHost', `x'$(touch ${MARKER})'`],
      ['configHost', '-oProxyCommand=touch'],
      ['configFile', `/tmp/c\nMatch exec "touch ${MARKER}"`],
      ['configFile', '/tmp/*'],
      ['controlPath', `/tmp/c %C $(touch ${MARKER})`],
      ['helperProgram', `/bin/true" \nMatch exec "touch ${MARKER}`],
      ['configPath', `${dir}/cfg $(touch ${MARKER})/x.conf`],
      ['configPath', `${dir}/cfg;touch ${MARKER};/x.conf`],
    ];
    for (const [field, value] of picked) await probe(field, value, true);
    expect(readdirSync(markerDir)).toEqual([]);
  }, 120_000);

  it('fast-check: hostile pieces in every field (fixed seed, bounded runs)', async () => {
    const pieces = (fragments: string[], embeds: ((p: string) => string)[], payloads: string[]) =>
      fc
        .tuple(fc.array(fc.constantFrom(...fragments), { maxLength: 4 }), fc.constantFrom(...embeds), fc.constantFrom(...payloads), fc.array(fc.constantFrom(...fragments), { maxLength: 4 }))
        .map(([before, embed, payload, after]) => `${before.join('')}${embed(payload)}${after.join('')}`);
    // Half anything at all, half what a path may hold as data (so the writer's output reaches ssh often).
    const junk = fc.oneof(pieces(FRAGMENTS, EMBED, PAYLOADS), pieces(DATA_FRAGMENTS, DATA_EMBED, PAYLOADS.slice(0, 2)));
    const [writtenBefore, connectsBefore] = [written, connects];
    await fc.assert(
      // Every value is read by `ssh -G`; one in five is connected with too (a connection costs about a second here).
      fc.asyncProperty(fc.constantFrom(...FIELDS), junk, fc.integer({ min: 0, max: 4 }), async (field, piece, dice) => {
        await probe(field, place(field, piece), dice === 0);
      }),
      { seed: 26, numRuns: 250 },
    );
    expect(readdirSync(markerDir)).toEqual([]);
    // The property did reach ssh: many values were written (paths hold such text as data), read and connected with.
    expect(written - writtenBefore).toBeGreaterThan(50);
    expect(connects - connectsBefore).toBeGreaterThan(10);
  }, 180_000);
});
