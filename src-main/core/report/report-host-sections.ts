// The report's sections on each host's health at export (disks with their
// margin, memory, load, uptime and reboot, GPU processes and what the console
// flags, GPU faults and Xid events) and, when the operator asked, the log lines
// around each lifecycle action. Unknown is "—", never 0; every part says when
// it was read.
import type { DiskView, EvidenceHostState, EvidenceLogExcerpt, GpuFaultsView, HostHealthView, KernelLogView } from '../../../src-preload/contract/index.js';
import { diskThresholdText, formatBytes, marginOf, thresholdsOf } from './disk-margin.js';
import { code, dash, duration, isoUtc, num, orDash, strong, type Block, type Cell, type DocSection } from './report-blocks.js';

export function hostStateSection(states: readonly EvidenceHostState[]): DocSection {
  const blocks: Block[] = [
    {
      kind: 'p',
      content: ["Each host's last host-health reading when the report was built, with the time each part was read. A figure shown — was not read; it is never a zero."],
    },
  ];
  for (const s of states) blocks.push(...hostBlocks(s));
  if (!states.length) blocks.push({ kind: 'p', content: ['No hosts.'] });
  return { id: 'hoststate', title: 'Host health at export', pageBreak: true, blocks };
}

function hostBlocks(s: EvidenceHostState): Block[] {
  const blocks: Block[] = [{ kind: 'heading', text: [s.host] }];
  const h = s.health;
  if (h === null) blocks.push({ kind: 'p', content: [`Host health is not read for ${s.host} (polling is off for this host). Connection: ${s.connection}.`] });
  else if (h.atMs === null) blocks.push({ kind: 'p', content: [`Host health not read yet${h.staleReason ? `: ${h.staleReason}` : ''}. Connection: ${s.connection}.`] });
  else {
    blocks.push({ kind: 'table', columns: [{ label: 'Fact' }, { label: 'Value' }], rows: factRows(h, s.connection) });
    if (h.disks.length) blocks.push(disksTable(h));
  }
  blocks.push(...processBlocks(s));
  blocks.push(...faultBlocks(s, h));
  return blocks;
}

function factRows(h: HostHealthView, connection: string): Cell[][] {
  const used = (total: number | null, free: number | null) => (total === null ? dash : `${free === null ? dash : formatBytes(total - free)} used of ${formatBytes(total)}`);
  const rows: Cell[][] = [
    [['Read at'], [isoUtc(h.atMs), h.staleReason ? ` — stale: ${h.staleReason} (the last good figures)` : '']],
    [['Connection'], [connection]],
    [['Uptime'], [h.uptimeS === null ? dash : duration(h.uptimeS * 1000)]],
    [['Rebooted'], [h.rebootedAtMs === null ? 'not seen by the console' : isoUtc(h.rebootedAtMs)]],
    [['Boot id'], h.bootId ? [code(h.bootId)] : [dash]],
    [['Load (1 / 5 / 15 min)'], [`${num(h.load1, 2)} / ${num(h.load5, 2)} / ${num(h.load15, 2)} on ${h.cpuCount ?? dash} CPUs`.replace(/n\/a/g, dash)]],
    [['RAM'], [used(h.memTotalBytes, h.memAvailableBytes)]],
    [['Swap'], [used(h.swapTotalBytes, h.swapFreeBytes)]],
  ];
  for (const c of h.cacheSizes) rows.push([[`Model cache ${c.path}`], [c.error ? `${dash} (${c.error})` : `${formatBytes(c.bytes)} (measured ${isoUtc(h.cacheSizesAtMs)})`]]);
  if (h.docker) rows.push([["Docker's root"], [h.docker.rootDir ?? `${dash} (${orDash(h.docker.why)})`]]);
  for (const issue of h.issues) rows.push([['Issue'], [issue]]);
  return rows;
}

function disksTable(h: HostHealthView): Block {
  const t = thresholdsOf(h);
  return {
    kind: 'table',
    columns: [{ label: 'Disk' }, { label: 'Path' }, { label: 'Mount' }, { label: 'Free', align: 'right' }, { label: 'Total', align: 'right' }, { label: 'Free %', align: 'right' }, { label: `Margin (low below ${diskThresholdText(t)})` }],
    rows: h.disks.map((d: DiskView) => {
      const verdict = marginOf(d, t);
      const pct = d.freeBytes !== null && d.totalBytes ? `${num((d.freeBytes / d.totalBytes) * 100, 1)} %` : dash;
      return [[d.kind], [d.path], [orDash(d.mount)], [formatBytes(d.freeBytes)], [formatBytes(d.totalBytes)], [pct], verdict === 'low' ? [strong('LOW')] : [verdict === 'ok' ? 'ok' : `unknown${d.error ? `: ${d.error}` : ''}`]];
    }),
  };
}

function processBlocks(s: EvidenceHostState): Block[] {
  if (s.gpuProcesses === null) return [{ kind: 'p', content: ['GPU processes: not read.'] }];
  const rows: Cell[][] = s.gpus.flatMap((g) =>
    (g.processes ?? []).map((p): Cell[] => [
      [String(g.index)],
      [p.pid === null ? dash : String(p.pid)],
      [orDash(p.name)],
      [orDash(p.user)],
      [p.usedMemoryMiB === null ? dash : `${num(p.usedMemoryMiB)} MiB`],
      [p.serviceId ? code(p.serviceId) : strong('not a configured service'), ` — ${p.why}`],
    ]),
  );
  const blocks: Block[] = [
    { kind: 'p', content: [strong('GPU processes'), ` read ${isoUtc(s.gpuProcesses.atMs)}, matched to services against the process table of ${isoUtc(s.gpuProcesses.matchedAtMs)}.`] },
    rows.length
      ? { kind: 'table', columns: [{ label: 'GPU', align: 'right' }, { label: 'PID', align: 'right' }, { label: 'Process' }, { label: 'User' }, { label: 'GPU memory', align: 'right' }, { label: 'Service' }], rows }
      : { kind: 'p', content: ['No process holds GPU memory.'] },
  ];
  if (s.gpuProcesses.flags.length) {
    blocks.push({
      kind: 'list',
      items: s.gpuProcesses.flags.map((f) => [strong(f.code), ` ${f.message}`, ...(f.command ? [' — the operator may run ', code(f.command), ' (the console runs nothing)'] : [])]),
    });
  }
  return blocks;
}

function faultBlocks(s: EvidenceHostState, h: HostHealthView | null): Block[] {
  const withFaults = s.gpus.filter((g) => g.faults !== null);
  const blocks: Block[] = [];
  if (withFaults.length) {
    blocks.push({ kind: 'p', content: [strong('GPU faults'), ' as last read, per GPU (unknown: —).'] });
    blocks.push({
      kind: 'table',
      columns: [{ label: 'GPU', align: 'right' }, { label: 'ECC uncorrected (volatile / aggregate)' }, { label: 'ECC corrected' }, { label: 'Retired pages' }, { label: 'Throttle' }, { label: 'Source, read at' }],
      rows: withFaults.map((g) => faultRow(g.index, g.faults!)),
    });
  }
  if (h?.kernelLog) blocks.push(...kernelLogBlocks(h.kernelLog));
  for (const issue of h?.faultIssues ?? []) blocks.push({ kind: 'p', content: [`Fault figures: ${issue}`] });
  return blocks;
}

function faultRow(index: number, f: GpuFaultsView): Cell[] {
  const n = (v: number | null) => (v === null ? dash : String(v));
  const throttle = f.throttleReasons === null ? dash : f.throttleReasons.length ? f.throttleReasons.join(', ') : 'none';
  const extra = [f.temperatureCriticalC !== null ? `critical ${f.temperatureCriticalC} °C` : null, f.rasUncorrected !== null || f.rasCorrected !== null ? `RAS ${n(f.rasUncorrected)} uncorrected / ${n(f.rasCorrected)} corrected` : null].filter((x) => x !== null);
  return [
    [String(index)],
    [`${n(f.eccUncorrectedVolatile)} / ${n(f.eccUncorrectedAggregate)}${f.eccEnabled === false ? ' (ECC off)' : ''}`],
    [`${n(f.eccCorrectedVolatile)} / ${n(f.eccCorrectedAggregate)}`],
    [`${n(f.retiredPages)}${f.retiredPagesPending ? ' (pending)' : ''}`],
    [`${throttle}${f.slowdownSinceMs !== null ? ` since ${isoUtc(f.slowdownSinceMs)}` : ''}${extra.length ? `; ${extra.join('; ')}` : ''}`],
    [f.source, '\n', isoUtc(f.atMs)],
  ];
}

function kernelLogBlocks(k: KernelLogView): Block[] {
  if (k.source === null) return [{ kind: 'p', content: [strong('Kernel log (Xid events): not readable'), ` — ${orDash(k.why)}`] }];
  const head: Block = { kind: 'p', content: [strong('Kernel log'), ` read with ${k.source}: ${k.xids.length} Xid event(s).`] };
  if (!k.xids.length) return [head];
  return [
    head,
    {
      kind: 'table',
      columns: [{ label: 'Time' }, { label: 'Xid', align: 'right' }, { label: 'GPU', align: 'right' }, { label: 'PID', align: 'right' }, { label: 'Line' }],
      rows: k.xids.map((x) => [[isoUtc(x.atMs)], [String(x.xid)], [x.gpuIndex === null ? dash : String(x.gpuIndex)], [x.pid === null ? dash : String(x.pid)], [x.text]]),
    },
  ];
}

export function logExcerptsSection(excerpts: readonly EvidenceLogExcerpt[]): DocSection {
  const blocks: Block[] = [
    { kind: 'p', content: ['Included because the operator asked for it: the service\'s log lines from 30 s before each lifecycle action started to 60 s after it ended, masked as every log line is, at most 200 per action.'] },
  ];
  if (!excerpts.length) blocks.push({ kind: 'p', content: ['No lifecycle action ran in the window.'] });
  for (const x of excerpts) {
    blocks.push({ kind: 'heading', text: [`${x.kind} of ${x.host}/${x.serviceId} `, code(x.actionId)] });
    const where = x.source ? `${x.source.description}, ` : '';
    blocks.push({ kind: 'p', content: [`${where}${isoUtc(x.fromMs)} to ${isoUtc(x.toMs)}`] });
    if (x.problem !== null) blocks.push({ kind: 'p', content: [strong('No lines:'), ' ', x.problem] });
    else if (!x.lines.length) blocks.push({ kind: 'p', content: ['The log holds no line in this window.'] });
    else {
      blocks.push({
        kind: 'table',
        columns: [{ label: 'Time' }, { label: 'Line' }],
        rows: x.lines.map((l) => [[l.ts === null ? dash : isoUtc(l.ts)], l.failure ? [strong(`[${l.failure}]`), ' ', code(l.text)] : [code(l.text)]]),
      });
      if (x.omitted > 0) blocks.push({ kind: 'p', content: [`${x.omitted} later line(s) in the window are left out (200 per action).`] });
    }
  }
  return { id: 'logs', title: 'Log lines around lifecycle actions', pageBreak: true, blocks };
}
