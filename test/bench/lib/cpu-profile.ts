// Reads a V8 .cpuprofile written by a bench child (--cpu-prof) and tells where
// the busy time went: self time per function, inclusive time of the app's own
// functions (with the Node and undici code they call), and — given the
// yardstick's profile of the same run — what the proxy spends beyond it,
// function by function. Bundle lines map back to sources through the `// path`
// comments esbuild writes before each module.
import { existsSync, readFileSync } from 'node:fs';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

interface RawProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

export interface ProfileSummary {
  file: string;
  totalUs: number;
  busyUs: number;
  /** Self µs by `function source`. */
  self: Map<string, number>;
  /** Inclusive µs of functions whose source starts with the prefix. */
  inclusive: Map<string, number>;
  prefix: string;
}

const NOT_BUSY = new Set(['(idle)', '(program)']);

/** The profile file a child in `role` writes (see childFlags), once it has exited in order. */
export function profileFile(dir: string, role: string): string | null {
  const file = `${dir}/${role}-${process.pid}.cpuprofile`;
  return existsSync(file) ? file : null;
}

export function loadProfile(file: string, bundle: string | null, prefix = 'src-main/core/proxy/'): ProfileSummary {
  const profile = JSON.parse(readFileSync(file, 'utf8')) as RawProfile;
  const sections: Array<[number, string]> = [];
  const bundleName = bundle?.split('/').pop() ?? null;
  if (bundle) {
    readFileSync(bundle, 'utf8')
      .split('\n')
      .forEach((l, i) => {
        const m = /^\/\/ (\S+\.(?:ts|js|mjs))$/.exec(l);
        if (m) sections.push([i, m[1]!]);
      });
  }
  const source = (url: string, line: number): string => {
    if (!bundleName || !url.endsWith(bundleName)) return url.replace(/^.*node_modules\//, '').replace(/^file:\/\//, '');
    let s = '?';
    for (const [at, path] of sections) {
      if (at > line) break;
      s = path;
    }
    return s;
  };
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const names = new Map<number, string>();
  const nameOf = (n: ProfileNode): string => {
    let k = names.get(n.id);
    if (k === undefined) {
      const cf = n.callFrame;
      k = `${cf.functionName || '(anonymous)'} ${source(cf.url, cf.lineNumber)}`.trim();
      names.set(n.id, k);
    }
    return k;
  };
  const self = new Map<string, number>();
  const inclusive = new Map<string, number>();
  let busyUs = 0;
  let totalUs = 0;
  for (let i = 0; i < profile.samples.length; i++) {
    const dt = profile.timeDeltas[i] ?? 0;
    totalUs += dt;
    const leaf = byId.get(profile.samples[i]!)!;
    if (NOT_BUSY.has(leaf.callFrame.functionName)) continue;
    busyUs += dt;
    const leafName = nameOf(leaf);
    self.set(leafName, (self.get(leafName) ?? 0) + dt);
    const seen = new Set<string>();
    for (let id: number | undefined = leaf.id; id !== undefined; id = parent.get(id)) {
      const k = nameOf(byId.get(id)!);
      if (k.includes(` ${prefix}`) && !seen.has(k)) {
        seen.add(k);
        inclusive.set(k, (inclusive.get(k) ?? 0) + dt);
      }
    }
  }
  return { file, totalUs, busyUs, self, inclusive, prefix };
}

function rows(m: Map<string, number>, busyUs: number, top: number, filter: (k: string) => boolean = () => true): string {
  return [...m]
    .filter(([k]) => filter(k))
    .sort((a, b) => b[1] - a[1])
    .slice(0, top)
    .map(([k, us]) => `    ${((us / busyUs) * 100).toFixed(1).padStart(5)} %  ${(us / 1000).toFixed(0).padStart(6)} ms  ${k}`)
    .join('\n');
}

export function describeProfile(p: ProfileSummary, top = 15): string {
  const own = (k: string) => k.includes(` ${p.prefix}`);
  const ownSelf = [...p.self].filter(([k]) => own(k)).reduce((s, [, us]) => s + us, 0);
  return [
    `CPU profile ${p.file}: ${(p.totalUs / 1e6).toFixed(1)} s sampled, ${(p.busyUs / 1e6).toFixed(1)} s busy; ${((ownSelf / p.busyUs) * 100).toFixed(1)} % of busy is self time in ${p.prefix}**`,
    '  self time, all code (share of busy):',
    rows(p.self, p.busyUs, top),
    `  self time in ${p.prefix}**:`,
    rows(p.self, p.busyUs, top, own),
    `  inclusive time of ${p.prefix}** functions (with the Node/undici code they call):`,
    rows(p.inclusive, p.busyUs, top),
  ].join('\n');
}

/**
 * What `a` (the proxy) spends beyond `b` (the yardstick) when both served the same requests:
 * self time per function, a minus b, largest first.
 */
export function describeDifference(a: ProfileSummary, b: ProfileSummary, top = 25): string {
  const diff = new Map<string, number>();
  for (const [k, us] of a.self) diff.set(k, us - (b.self.get(k) ?? 0));
  for (const [k, us] of b.self) if (!a.self.has(k)) diff.set(k, -us);
  const extra = a.busyUs - b.busyUs;
  return [
    `busy ${(a.busyUs / 1000).toFixed(0)} ms vs ${(b.busyUs / 1000).toFixed(0)} ms: ${(extra / 1000).toFixed(0)} ms more; self time per function, proxy minus bare (share of that difference):`,
    [...diff]
      .sort((x, y) => y[1] - x[1])
      .slice(0, top)
      .map(([k, us]) => `    ${((us / extra) * 100).toFixed(1).padStart(5)} %  ${(us / 1000).toFixed(0).padStart(6)} ms  ${k}`)
      .join('\n'),
  ].join('\n');
}
