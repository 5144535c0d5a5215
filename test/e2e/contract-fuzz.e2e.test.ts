import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { z } from 'zod';
import { FleetSnapshotSchema, invokeChannels, type FleetSnapshot } from '../../src-preload/contract/index.js';
import { assertBuilt, startConsole, type RunningConsole } from '../helpers/console-process.js';

// Property-based fuzzing of the whole invoke contract through the real web
// bridge of a running `gpu-console serve --demo`. Every channel gets inputs
// derived from its own zod schema (so they reach the service behind it) and
// hostile ones (wrong types, paths to files that must stay private, 200 kB
// strings, 200-deep nesting, `__proto__` keys, bodies that are not objects).
// Every answer must be a well-formed `{ok,…}` value below HTTP 500 that
// carries none of the secrets planted before the run.
//
// Reproduce a failure with the printed seed: GPU_CONSOLE_FUZZ_SEED=<n>
// (GPU_CONSOLE_FUZZ_RUNS=<n> for more cases per channel).

const SEED = Number(process.env.GPU_CONSOLE_FUZZ_SEED ?? 20_260_611);
const RUNS = Number(process.env.GPU_CONSOLE_FUZZ_RUNS ?? 24);
const CALL_TIMEOUT_MS = 15_000;

/**
 * Channels whose success would disrupt the run or take long. They only get
 * inputs that their schema refuses (checked here with safeParse before
 * sending), which can never reach the service.
 */
const EXCLUDED: Readonly<Record<string, string>> = {
  'hosts.disconnect': 'drops a demo host’s SSH link',
  'hosts.reconnect': 'drops and re-dials a demo host’s SSH link',
  'hosts.trust': 'changes host-key trust',
  'hosts.refuseTrust': 'refuses a host key and stops the host',
  'hosts.forgetTrust': 'forgets a trusted host key',
  'hosts.importApply': 'writes hosts into the config file and reloads it',
  'config.reload': 're-reads the config and rebuilds the host links',
  'secrets.set': 'stores a secret (the one planted here is set directly)',
  'secrets.delete': 'deletes a secret',
  'proxy.revokeToken': 'revokes a client token',
  'hosts.declinePrompt': 'declines the question a host asks during login',
  'actions.propose': 'proposes a lifecycle action',
  'actions.approve': 'runs a lifecycle action on a model server',
  'actions.reject': 'decides a lifecycle action',
  'actions.withdraw': 'closes a waiting lifecycle proposal',
  'notifications.testChannel': 'sends a message to an outside notification channel',
  'notifications.saveChannel': 'adds or replaces an outside notification channel and stores its secret',
  'notifications.removeChannel': 'removes an outside notification channel and the secret it stored',
  'actions.grantStanding': 'grants a standing lifecycle approval',
  'actions.revokeStanding': 'revokes a standing lifecycle approval',
  'bench.start': 'starts a benchmark (long, loads the demo hosts)',
  'bench.deleteScenario': 'deletes a saved scenario',
  'bench.deleteRun': 'deletes a benchmark run',
  'reports.export': 'writes (and signs) an export folder',
};
/** A name that reads like one of the above but is a read: fuzzed in full. */
const SAFE_DESPITE_NAME: Readonly<Record<string, string>> = {
  'bench.export': 'renders a run as text in the answer; writes nothing',
  // Both act only on an id the advisor issued (a hash of the advice); a derived id is unknown: ADVISOR_UNKNOWN_RECOMMENDATION.
  'advisor.apply': 'acts only on a recommendation id the advisor issued; any other id is refused, nothing changes',
  'advisor.reject': 'acts only on a recommendation id the advisor issued; any other id is refused, nothing is stored',
};
/** A channel added later with a name like these is held back until someone classifies it above. */
const RISKY_NAME = /delete|remove|shutdown|quit|disconnect|reconnect|approve|propose|reject|trust|forget|export|apply|start|reload|revoke|grant|write|reset|wipe|secrets\.set/i;

function exclusionReason(channel: string): string | null {
  if (EXCLUDED[channel]) return EXCLUDED[channel];
  if (RISKY_NAME.test(channel) && !SAFE_DESPITE_NAME[channel]) return 'its name looks disruptive: classify it in EXCLUDED or SAFE_DESPITE_NAME';
  return null;
}

// ── generating inputs from a zod 4 schema ─────────────────────────────────

interface Pools {
  /** Values the running console knows (host labels, service ids, upstream keys, models). */
  words: string[];
  /** Paths to files nobody may read through the contract, and traversal spellings. */
  paths: string[];
  /** Loopback URLs whose behaviour is known: the console's own bridge, proxy and tunnels, and a closed port. */
  urls: string[];
  /** Text for free-form fields: ssh-config lines that Include or execute, JSONL prompts. */
  snippets: string[];
  /** Probe mode: every free-form string that can hold one is a private path or a snippet. */
  probe?: boolean;
}

interface CheckDef {
  check: string;
  minimum?: number;
  maximum?: number;
  length?: number;
  format?: string;
  pattern?: RegExp;
  value?: number;
  inclusive?: boolean;
}
interface Def {
  type: string;
  format?: string;
  checks?: Array<{ _zod: { def: CheckDef } }>;
  shape?: Record<string, z.core.$ZodType>;
  element?: z.core.$ZodType;
  items?: z.core.$ZodType[];
  options?: z.core.$ZodType[];
  keyType?: z.core.$ZodType;
  valueType?: z.core.$ZodType;
  innerType?: z.core.$ZodType;
  in?: z.core.$ZodType;
  getter?: () => z.core.$ZodType;
  entries?: Record<string, string | number>;
  values?: unknown[];
}
const defOf = (schema: z.core.$ZodType): Def => schema._zod.def as unknown as Def;
const checksOf = (def: Def): CheckDef[] => (def.checks ?? []).map((c) => c._zod.def);
const isOptional = (schema: z.core.$ZodType): boolean => (schema._zod as { optin?: string }).optin === 'optional';

function matching(pattern: RegExp): fc.Arbitrary<string> {
  // fast-check cannot generate for every flag; without `i` the strings are a subset of the matches.
  const usable = new RegExp(pattern.source, pattern.flags.replace(/[^dgmsu]/g, ''));
  try {
    return fc.stringMatching(usable);
  } catch {
    return fc.string();
  }
}

function stringArb(def: Def, pools: Pools): fc.Arbitrary<string> {
  let min = 0;
  let max = Number.POSITIVE_INFINITY;
  let pattern: RegExp | undefined;
  let format = def.format;
  for (const c of checksOf(def)) {
    if (c.check === 'min_length') min = Math.max(min, c.minimum ?? 0);
    else if (c.check === 'max_length') max = Math.min(max, c.maximum ?? max);
    else if (c.check === 'length_equals') min = max = c.length ?? 0;
    else if (c.check === 'string_format' && c.format === 'regex') pattern = c.pattern;
    else if (c.check === 'string_format') format = c.format;
  }
  // URLs stay on known loopback ports: no DNS, nothing past this machine, no other process's servers.
  if (format === 'url') return fc.constantFrom(...pools.urls);
  if (format === 'uuid' || format === 'guid') return fc.uuid();
  if (format === 'email') return fc.emailAddress();
  const fits = (s: string) => s.length >= min && s.length <= max && (!pattern || new RegExp(pattern.source, pattern.flags.replace('g', '')).test(s));
  const maxLength = Math.min(max, Math.max(min, 40));
  const base = pattern
    ? matching(pattern).filter(fits)
    : fc.oneof(fc.string({ minLength: min, maxLength }), fc.string({ minLength: min, maxLength, unit: 'binary' }));
  if (pools.probe) {
    const probes = [...pools.paths, ...pools.snippets].filter(fits);
    if (probes.length && !pattern) return fc.constantFrom(...probes);
  }
  const choices = [{ weight: 2, arbitrary: base }];
  for (const [weight, pool] of [[3, pools.words], [1, pools.paths], [1, pools.snippets]] as const) {
    const known = pool.filter(fits);
    if (known.length) choices.push({ weight, arbitrary: fc.constantFrom(...known) });
  }
  return fc.oneof(...choices);
}

function numberArb(def: Def): fc.Arbitrary<number> {
  let integer = def.format === 'safeint' || def.format === 'int32' || def.format === 'uint32';
  let lo = Number.NEGATIVE_INFINITY;
  let hi = Number.POSITIVE_INFINITY;
  let loOpen = false;
  let hiOpen = false;
  for (const c of checksOf(def)) {
    if (c.check === 'number_format') integer = true;
    else if (c.check === 'greater_than' && c.value !== undefined && c.value >= lo) [lo, loOpen] = [c.value, !c.inclusive];
    else if (c.check === 'less_than' && c.value !== undefined && c.value <= hi) [hi, hiOpen] = [c.value, !c.inclusive];
  }
  if (integer) {
    const min = Number.isFinite(lo) ? (loOpen ? Math.floor(lo) + 1 : Math.ceil(lo)) : Number.MIN_SAFE_INTEGER;
    const max = Number.isFinite(hi) ? (hiOpen ? Math.ceil(hi) - 1 : Math.floor(hi)) : Number.MAX_SAFE_INTEGER;
    // Timestamps and small counts are what the services compare against; plain integers cover the rest.
    const likely = [0, 1, 2, 10, Date.now() - 3_600_000, Date.now()].filter((n) => n >= min && n <= max);
    return likely.length ? fc.oneof(fc.integer({ min, max }), fc.constantFrom(...likely)) : fc.integer({ min, max });
  }
  const min = Number.isFinite(lo) ? lo : -1e12;
  const max = Number.isFinite(hi) ? hi : 1e12;
  const fraction = fc.double({ noNaN: true, min, max, minExcluded: loOpen, maxExcluded: hiOpen });
  // Whole numbers too: a closed-loop level, a price, a count are most often one.
  const wholeMin = Math.max(loOpen ? Math.floor(min) + 1 : Math.ceil(min), -(2 ** 31));
  const wholeMax = Math.min(hiOpen ? Math.ceil(max) - 1 : Math.floor(max), 2 ** 31);
  return wholeMin <= wholeMax ? fc.oneof(fraction, fc.integer({ min: wholeMin, max: wholeMax })) : fraction;
}

/** An arbitrary of values the schema should accept (best effort: refinements may still refuse some). */
function derive(schema: z.core.$ZodType, pools: Pools, depth = 0): fc.Arbitrary<unknown> {
  const def = defOf(schema);
  const sub = (s: z.core.$ZodType) => derive(s, pools, depth + 1);
  if (depth > 12) return fc.constant(null);
  switch (def.type) {
    case 'string':
      return stringArb(def, pools);
    case 'number':
    case 'int':
      return numberArb(def);
    case 'boolean':
      return fc.boolean();
    case 'null':
      return fc.constant(null);
    case 'enum':
      return fc.constantFrom(...Object.values(def.entries!));
    case 'literal':
      return fc.constantFrom(...def.values!);
    case 'optional':
    case 'default':
    case 'prefault':
    case 'nonoptional':
    case 'catch':
    case 'readonly':
      return sub(def.innerType!);
    case 'nullable':
      return fc.option(sub(def.innerType!), { nil: null, freq: 4 });
    case 'pipe':
      return sub(def.in!);
    case 'lazy':
      return sub(def.getter!());
    case 'array': {
      let minLength = 0;
      let maxLength = 4;
      for (const c of checksOf(def)) {
        if (c.check === 'min_length') minLength = c.minimum ?? 0;
        if (c.check === 'max_length') maxLength = Math.min(c.maximum ?? 4, Math.max(minLength, 4));
      }
      return fc.array(sub(def.element!), { minLength, maxLength: Math.max(minLength, maxLength) });
    }
    case 'tuple':
      return fc.tuple(...def.items!.map(sub));
    case 'union':
      return fc.oneof(...def.options!.map(sub));
    case 'record':
      return fc.dictionary(sub(def.keyType!).map(String), sub(def.valueType!), { maxKeys: 4 });
    case 'object': {
      const shape = def.shape!;
      const model = Object.fromEntries(Object.entries(shape).map(([k, s]) => [k, sub(s)]));
      return fc.record(model, { requiredKeys: Object.keys(shape).filter((k) => !isOptional(shape[k]!)) });
    }
    case 'unknown':
    case 'any':
      return fc.jsonValue({ maxDepth: 3 });
    default:
      return fc.anything({ maxDepth: 2 });
  }
}

// ── hostile inputs ────────────────────────────────────────────────────────

const HUGE = ('../' + 'A'.repeat(97)).repeat(2_000); // 200 kB
const deepArray = (n: number): unknown => (n === 0 ? [] : [deepArray(n - 1)]);
const deepObject = (n: number): unknown => (n === 0 ? {} : { a: deepObject(n - 1) });
const PROTO_KEYS = ['__proto__', 'constructor', 'prototype', 'toString', 'hasOwnProperty', 'valueOf'];

function hostileValue(pools: Pools): fc.Arbitrary<unknown> {
  return fc.oneof(
    fc.constantFrom<unknown>(null, true, false, 0, -1, 1.5, 2 ** 53 + 2, -1e308, 1e308, '', ' ', '\u0000', '\uD800', '\u202Eevil', [], {}, [null], { a: 1 }),
    fc.constantFrom(...pools.paths),
    fc.constant(HUGE),
    fc.constant(deepArray(200)),
    fc.constant(deepObject(200)),
    fc.string({ unit: 'binary', maxLength: 64 }),
  );
}

/** Every place in a JSON value a mutation can go: [] is the whole body. */
function pathsIn(value: unknown, at: Array<string | number> = [], out: Array<Array<string | number>> = []): Array<Array<string | number>> {
  out.push(at);
  if (Array.isArray(value)) value.forEach((v, i) => pathsIn(v, [...at, i], out));
  else if (value && typeof value === 'object') for (const [k, v] of Object.entries(value)) pathsIn(v, [...at, k], out);
  return out;
}

/** Sets an own property, so that `__proto__` becomes a real JSON key and not the prototype. */
function setOwn(target: object, key: string | number, value: unknown): void {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
}

function withValueAt(value: unknown, path: Array<string | number>, replacement: unknown): unknown {
  if (path.length === 0) return replacement;
  const copy = JSON.parse(JSON.stringify(value)) as Record<string | number, unknown>;
  let node = copy;
  for (const step of path.slice(0, -1)) node = node[step] as Record<string | number, unknown>;
  setOwn(node, path[path.length - 1]!, replacement);
  return copy;
}

function withKeyAt(value: unknown, path: Array<string | number>, key: string, extra: unknown): unknown {
  const copy = JSON.parse(JSON.stringify(value)) as unknown;
  let node = copy as Record<string | number, unknown>;
  for (const step of path) node = node[step] as Record<string | number, unknown>;
  if (node && typeof node === 'object' && !Array.isArray(node)) setOwn(node, key, extra);
  return copy;
}

/** One request body, printed short when fast-check reports it. */
class Case {
  constructor(
    readonly kind: string,
    readonly body: string,
  ) {}
  [fc.toStringMethod](): string {
    return `${this.kind}: ${short(this.body)}`;
  }
}

const RAW_BODIES = ['null', '[]', '"x"', '42', 'true', '{', '{"a":', '[1,2', '\u0000', 'NaN', '{}garbage', '{"a":1,"a":2}', '\uFEFF{}'];

function malformedCases(valid: fc.Arbitrary<unknown>, pools: Pools): fc.Arbitrary<Case> {
  const mutated = fc
    .tuple(valid, fc.nat(), hostileValue(pools))
    .map(([v, i, bad]) => {
      const paths = pathsIn(v);
      const path = paths[i % paths.length]!;
      return new Case(`value at /${path.join('/')} replaced`, JSON.stringify(withValueAt(v, path, bad)));
    });
  const oddKey = fc
    .tuple(valid, fc.nat(), fc.constantFrom(...PROTO_KEYS), fc.oneof(hostileValue(pools), fc.constant({ polluted: true, ok: true, isAdmin: true })))
    .map(([v, i, key, extra]) => {
      const objects = pathsIn(v).filter((p) => {
        let node = v as Record<string | number, unknown>;
        for (const step of p) node = node[step] as Record<string | number, unknown>;
        return node !== null && typeof node === 'object' && !Array.isArray(node);
      });
      const path = objects.length ? objects[i % objects.length]! : [];
      return new Case(`key "${key}" added at /${path.join('/')}`, JSON.stringify(withKeyAt(v, path, key, extra)));
    });
  const raw = fc.constantFrom(...RAW_BODIES).map((b) => new Case('raw body', b));
  const wholeBody = hostileValue(pools).map((b) => new Case('hostile body', JSON.stringify(b)));
  return fc.oneof(mutated, oddKey, raw, wholeBody);
}

/** Whether the bridge refuses this body before any service runs (invalid JSON, or the schema says no). */
function refusedBySchema(schema: z.ZodType, body: string): boolean {
  let input: unknown;
  try {
    input = body.length === 0 ? {} : JSON.parse(body);
  } catch {
    return true;
  }
  return !schema.safeParse(input).success && !schema.safeParse(input ?? {}).success;
}

// ── calling the bridge and judging answers ────────────────────────────────

interface Answer {
  status: number;
  text: string;
}
interface Needle {
  what: string;
  text: string;
}

function short(s: string, n = 300): string {
  const shown = JSON.stringify(s.length > n ? s.slice(0, n) : s);
  return s.length > n ? `${shown}… (${s.length} chars)` : shown;
}

/** What is wrong with one answer; empty when it is fine. */
function problemsOf(answer: Answer, needles: Needle[]): string[] {
  const problems: string[] = [];
  if (answer.status >= 500) problems.push(`answered HTTP ${answer.status}`);
  let body: unknown;
  try {
    body = JSON.parse(answer.text);
  } catch {
    problems.push('answer is not JSON');
  }
  if (body !== undefined) {
    const b = body as { ok?: unknown; data?: unknown; error?: { code?: unknown; message?: unknown } };
    if (b === null || typeof b !== 'object' || Array.isArray(b)) problems.push('answer is not an {ok,…} object');
    else if (b.ok === true) {
      if (!('data' in b)) problems.push('ok:true without data');
      if (answer.status !== 200) problems.push(`ok:true with HTTP ${answer.status}`);
    } else if (b.ok === false) {
      if (typeof b.error?.code !== 'string' || b.error.code.length === 0) problems.push('ok:false without an error code');
      if (typeof b.error?.message !== 'string' || b.error.message.length === 0) problems.push('ok:false without an error message');
      if (answer.status < 400) problems.push(`ok:false with HTTP ${answer.status}`);
    } else problems.push('answer has no boolean ok');
  }
  for (const n of needles) if (answer.text.includes(n.text)) problems.push(`answer contains ${n.what}`);
  return [...new Set(problems)];
}

describe('the invoke contract under fuzzing, through the real web bridge', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'gc-fuzz-'));
  const canary = join(dataDir, 'fuzz-command-ran');
  let proc: RunningConsole;
  let stopped = false;
  let origin = '';
  let token = '';
  let before: FleetSnapshot;
  const needles: Needle[] = [];
  /** With GPU_CONSOLE_FUZZ_STATS=1: how often each channel answered what, printed at the end. */
  const stats = new Map<string, number>();
  const pools: Pools = { words: [], paths: [], urls: [], snippets: [] };
  const plantedSecretName = `fuzz-planted-${randomBytes(4).toString('hex')}`;

  async function call(channel: string, body: string): Promise<Answer> {
    try {
      const res = await fetch(`${origin}/api/${channel}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-gpu-console-token': token },
        body,
        signal: AbortSignal.timeout(CALL_TIMEOUT_MS),
      });
      return { status: res.status, text: await res.text() };
    } catch (err) {
      const cause = (err as { cause?: { code?: string } }).cause?.code;
      throw new Error(`${channel}: no answer (${(err as Error).message}${cause ? `, ${cause}` : ''}); console ${proc.child.exitCode === null ? 'alive' : `exited ${proc.child.exitCode}`}\n  input: ${short(body)}\n  console output: ${short(proc.output().slice(-800), 800)}`);
    }
  }

  async function callOk<T>(channel: string, input: unknown): Promise<T> {
    const answer = await call(channel, JSON.stringify(input));
    expect(problemsOf(answer, needles), `${channel}: ${short(answer.text)}`).toEqual([]);
    const body = JSON.parse(answer.text) as { ok: boolean; data: T };
    expect(body.ok, `${channel}: ${short(answer.text)}`).toBe(true);
    return body.data;
  }

  function judge(channel: string, kase: Case, answer: Answer, mustRefuse = false): void {
    if (process.env.GPU_CONSOLE_FUZZ_STATS) {
      const code = answer.status === 200 ? 'ok' : ((/"code":"([^"]+)"/.exec(answer.text) ?? [])[1] ?? '?');
      const key = `${channel} ${kase.kind.split(' ')[0]} ${answer.status} ${code}`;
      stats.set(key, (stats.get(key) ?? 0) + 1);
    }
    const problems = problemsOf(answer, needles);
    // Refused here by the same schema, so the bridge must refuse it too (400) and nothing may have run.
    if (mustRefuse && answer.status !== 400) problems.push(`an input its schema refuses answered HTTP ${answer.status}, not 400`);
    if (problems.length === 0) return;
    const logs = answer.status >= 500 ? `\n  console output: ${short(proc.output().slice(-800), 800)}` : '';
    throw new Error(`${channel}: ${problems.join('; ')} (GPU_CONSOLE_FUZZ_SEED=${SEED})\n  input (${kase.kind}): ${short(kase.body)}\n  answer HTTP ${answer.status}: ${short(answer.text, 600)}${logs}`);
  }

  beforeAll(async () => {
    assertBuilt();
    proc = await startConsole(['--demo', '--demo-traffic', 'off', '--data-dir', dataDir, '--ui-port', '0']);
    const ui = new URL(proc.ui);
    origin = ui.origin;
    token = /token=([0-9a-f]+)/.exec(ui.hash)![1]!;
    // Fuzz a settled fleet: every demo host connected, its tunnels up.
    await vi.waitFor(
      async () => {
        const states = (await callOk<FleetSnapshot>('fleet.snapshot', {})).hosts.map((h) => h.state);
        if (!states.every((s) => s === 'connected')) throw new Error(`hosts not connected yet: ${states.join(', ')}`);
      },
      { timeout: 20_000, interval: 200 },
    );
    before = await callOk<FleetSnapshot>('fleet.snapshot', {});

    // Secret material no answer may ever carry.
    needles.push({ what: 'the bridge token', text: token });
    const passwd = readFileSync('/etc/passwd', 'utf8').split('\n')[0]!;
    if (passwd.length >= 8) needles.push({ what: 'the first line of /etc/passwd', text: passwd.slice(0, 10) });
    const demoDir = join(dataDir, 'demo');
    const keyFiles = existsSync(demoDir) ? readdirSync(demoDir).filter((f) => readFileSync(join(demoDir, f), 'utf8').includes('PRIVATE KEY')) : [];
    expect(keyFiles.length, 'the demo fleet writes its private keys under <data dir>/demo').toBeGreaterThan(0);
    for (const f of keyFiles) {
      const body = readFileSync(join(demoDir, f), 'utf8').split('\n').filter((l) => l && !l.startsWith('-----'));
      // Skip the first line (the same `openssh-key-v1` header in every key) and the short padded last one.
      for (const line of body.slice(1, -1)) if (line.length >= 24) needles.push({ what: `a line of the private key demo/${f}`, text: line.slice(0, 24) });
    }
    const secretValue = `PLANTED-SECRET-${randomBytes(16).toString('hex')}`;
    needles.push({ what: 'the planted secret value', text: secretValue });
    await callOk('secrets.set', { name: plantedSecretName, value: secretValue });
    const label = before.hosts[0]!.label;
    const passphrase = `PLANTED-PASSPHRASE-${randomBytes(16).toString('hex')}`;
    needles.push({ what: 'the planted passphrase', text: passphrase });
    const ppAnswer = await call('hosts.passphrase', JSON.stringify({ label, passphrase }));
    expect(problemsOf(ppAnswer, needles)).toEqual([]);
    const created = await callOk<{ token: string }>('proxy.createToken', { name: 'fuzz-planted', maxClass: 'batch' });
    needles.push({ what: 'the planted proxy client token', text: created.token });

    pools.words = [...new Set(before.hosts.flatMap((h) => [h.label, ...(h.hostKeyFingerprint ? [h.hostKeyFingerprint] : []), ...h.services.flatMap((s) => [s.id, `${h.label}/${s.id}`, s.model, ...s.aliases])]))];
    pools.words.push(plantedSecretName, 'fuzz-planted');
    const info = await callOk<{ proxyUrl: string | null }>('app.info', {});
    pools.urls = [`${origin}/`, `${origin}/index.html?x=`, `${origin}/api/events?x=`, 'http://127.0.0.1:1/', ...(info.proxyUrl ? [info.proxyUrl] : [])];
    pools.urls.push(...before.hosts.flatMap((h) => h.services.flatMap((s) => (s.tunnel.localUrl ? [s.tunnel.localUrl] : []))));
    pools.paths = [
      '/etc/passwd',
      '/etc/shadow',
      '../../../../../../../../etc/passwd',
      '..\\..\\..\\..\\etc\\passwd',
      '%2e%2e%2f%2e%2e%2f%2e%2e%2fetc%2fpasswd',
      '/etc/passwd\u0000.yaml',
      'file:///etc/passwd',
      '~/.ssh/id_ed25519',
      '~/.ssh/config',
      '/proc/self/environ',
      dataDir,
      join(dataDir, 'secrets.json'),
      join(dataDir, 'gpu-console.db'),
      join(dataDir, 'ready.json'),
      join(dataDir, '..', basename(dataDir), 'secrets.json'),
      ...keyFiles.map((f) => join(demoDir, f)),
    ];
    pools.snippets = [
      ...pools.paths.slice(0, 3).concat(join(dataDir, 'secrets.json'), join(dataDir, 'ready.json')).map((p) => `Include ${p}\n`),
      `Host fz\n  HostName 127.0.0.1\n  IdentityFile ${join(demoDir, keyFiles[0] ?? 'client_ed25519')}\n`,
      `Host *\n  ProxyCommand touch ${canary}\n`,
      `Match exec "touch ${canary}"\n  User x\n`,
      '[{"role":"user","content":"hi"}]\n',
      '{"messages":[{"role":"user","content":"hi"}],"expected":{"a":1}}\n',
    ];
  }, 60_000);

  afterAll(async () => {
    if (stats.size) console.log([...stats].map(([k, n]) => `${k} ×${n}`).sort().join('\n'));
    if (proc && !stopped) await proc.stop();
  });

  const channels = Object.entries(invokeChannels) as Array<[string, { input: z.ZodType }]>;
  channels.forEach(([channel, spec], index) => {
    const reason = exclusionReason(channel);
    const title = reason ? `${channel}: only inputs its schema refuses (excluded: ${reason})` : `${channel}: schema-derived and hostile inputs`;
    it(title, async () => {
      const valid = derive(spec.input, pools);
      const malformed = malformedCases(valid, pools);
      const derived = valid.map((v) => new Case('derived', JSON.stringify(v)));
      const probes = derive(spec.input, { ...pools, probe: true }).map((v) => new Case('path probe', JSON.stringify(v)));
      const cases = reason ? malformed : fc.oneof(derived, probes, malformed);
      let sent = 0;
      await fc.assert(
        fc.asyncProperty(cases, async (kase) => {
          if (reason && !refusedBySchema(spec.input, kase.body)) return;
          sent++;
          judge(channel, kase, await call(channel, kase.body), reason !== null);
        }),
        { seed: SEED + index, numRuns: RUNS, endOnFailure: true },
      );
      expect(sent, 'cases sent').toBeGreaterThan(0);
    }, 60_000);
  });

  it('names that are not channels (odd, encoded, prototype keys) answer 4xx, never 500', async () => {
    const names = ['__proto__', 'constructor', 'toString', 'hasOwnProperty', 'APP.INFO', 'app.info.', 'app.info%00', '%2e%2e%2fsecrets.set', '..%2f..%2fsecrets.json', '%', '%E0%A4%A', '%uD800'];
    const failures: string[] = [];
    for (const name of names) {
      const answer = await call(name, '{}');
      if (answer.status < 400) failures.push(`/api/${name}: HTTP ${answer.status} ${short(answer.text)}`);
      try {
        judge(`/api/${name}`, new Case('channel name', '{}'), answer);
      } catch (err) {
        failures.push((err as Error).message);
      }
    }
    expect(failures).toEqual([]);
  });

  it('is healthy afterwards: the fleet still answers, no command ran, the process lives and stops with 0', async () => {
    const after = await callOk<FleetSnapshot>('fleet.snapshot', {});
    FleetSnapshotSchema.parse(after);
    expect(after.hosts.map((h) => h.label).sort()).toEqual(before.hosts.map((h) => h.label).sort());
    expect((await callOk<{ names: string[] }>('secrets.list', {})).names).toContain(plantedSecretName);
    expect(existsSync(canary), 'a fuzzed ssh config made the console run a command').toBe(false);
    expect(proc.child.exitCode).toBeNull();
    expect(proc.child.signalCode).toBeNull();
    stopped = true;
    expect(await proc.stop()).toBe(0);
  });
});
