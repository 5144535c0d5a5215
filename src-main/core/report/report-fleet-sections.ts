// The report's sections about the hosts themselves: inventory, security
// checks, health over the window and the telemetry charts.
import type { Evidence, EvidenceChart } from '../../../src-preload/contract/index.js';
import { isoUtc, num, numUpTo, duration, badge, code, strong, dash, orDash, chartDescription, type Cell, type Block, type DocSection } from './report-blocks.js';

export function inventorySection(hosts: NonNullable<Evidence['inventory']>): DocSection {
  const blocks: Block[] = [];
  if (!hosts.length) blocks.push({ kind: 'p', content: ['No hosts in the inventory.'] });
  for (const h of hosts) {
    blocks.push({ kind: 'heading', text: [h.label] });
    const facts: Cell[][] = [
      [['Address'], [h.address]],
      [['Jump host'], [orDash(h.jumpHost)]],
      [['SSH transport'], [orDash(h.sshTransport)]],
      [['Connection'], [h.connection]],
      [['Host key'], h.hostKeyFingerprint ? [code(h.hostKeyFingerprint)] : ['not recorded']],
      [['Price per hour'], [h.pricePerHourUsd === null ? 'not configured' : `${numUpTo(h.pricePerHourUsd, 6)} USD/h`]],
    ];
    if (h.liveError !== null) facts.push([['Live facts'], [strong('not read: '), h.liveError]]);
    blocks.push({ kind: 'table', columns: [{ label: 'Fact' }, { label: 'Value' }], rows: facts });
    if (h.gpus.length) {
      blocks.push({
        kind: 'table',
        columns: [{ label: 'GPU', align: 'right' }, { label: 'Name' }, { label: 'Memory', align: 'right' }, { label: 'Driver' }],
        rows: h.gpus.map((g) => [[String(g.index)], [g.name], [g.memoryTotalMiB === null ? 'n/a' : `${num(g.memoryTotalMiB)} MiB`], [orDash(g.driverVersion)]]),
      });
    } else blocks.push({ kind: 'p', content: [h.liveError ? 'GPUs: not read.' : 'GPUs: none reported.'] });
    if (h.services.length) {
      blocks.push({
        kind: 'table',
        columns: [
          { label: 'Service' },
          { label: 'Kind' },
          { label: 'Model' },
          { label: 'Aliases' },
          { label: 'Port', align: 'right' },
          { label: 'Slots', align: 'right' },
          { label: 'Server version' },
          { label: 'Served models (max context)' },
          { label: 'Health' },
        ],
        rows: h.services.map((s) => [
          [code(s.id)],
          [s.kind],
          [s.model],
          [s.aliases.length ? s.aliases.join(', ') : dash],
          [String(s.remotePort)],
          [String(s.slots)],
          [orDash(s.serverVersion)],
          [s.servedModels.length ? s.servedModels.map((m) => `${m.id} (${m.maxContext === null ? 'n/a' : num(m.maxContext)})`).join('\n') : 'not answered'],
          [s.health],
        ]),
      });
      for (const s of h.services) {
        const entries = Object.entries(s.config);
        if (!entries.length) continue;
        blocks.push({
          kind: 'p',
          content: [strong(`Config of ${s.id}:`), ' ', entries.map(([k, v]) => `${k} = ${typeof v === 'string' ? v : JSON.stringify(v)}`).join('; ')],
        });
      }
    } else blocks.push({ kind: 'p', content: ['Services: none configured.'] });
  }
  return { id: 'inventory', title: 'Inventory', pageBreak: true, blocks };
}

export function securitySection(hosts: NonNullable<Evidence['security']>): DocSection {
  const blocks: Block[] = [];
  if (!hosts.length) blocks.push({ kind: 'p', content: ['No security checks were run.'] });
  for (const h of hosts) {
    blocks.push({ kind: 'heading', text: [h.host] });
    blocks.push(
      h.checks.length
        ? {
            kind: 'table',
            columns: [{ label: 'Verdict' }, { label: 'Check' }, { label: 'What was seen' }, { label: 'Measured at' }],
            rows: h.checks.map((c) => [[badge(c.verdict)], [c.label, '\n', code(c.id)], [orDash(c.evidence)], [c.at === null ? 'not measured' : isoUtc(c.at)]]),
          }
        : { kind: 'p', content: ['No checks for this host.'] },
    );
  }
  return { id: 'security', title: 'Security checks', pageBreak: false, blocks };
}

export function healthSection(hosts: NonNullable<Evidence['health']>): DocSection {
  const blocks: Block[] = [];
  if (!hosts.length) return { id: 'health', title: 'Health', pageBreak: false, blocks: [{ kind: 'p', content: ['No hosts.'] }] };
  blocks.push({
    kind: 'p',
    content: ['Telemetry coverage: share of the window with fresh telemetry (10 s buckets holding data ÷ buckets in the window). Stale periods are gaps of 60 s or more.'],
  });
  blocks.push({
    kind: 'table',
    columns: [{ label: 'Host' }, { label: 'Telemetry coverage', align: 'right' }, { label: 'Stale periods', align: 'right' }, { label: 'Reconnects', align: 'right' }],
    rows: hosts.map((h) => [
      [h.host],
      [h.telemetryCoveragePct === null ? 'no samples' : `${num(h.telemetryCoveragePct, 1)} %`],
      [String(h.stalePeriods.length)],
      [String(h.reconnects)],
    ]),
  });
  const stale = hosts.flatMap((h) => h.stalePeriods.map((p) => ({ host: h.host, ...p })));
  if (stale.length) {
    blocks.push({ kind: 'heading', text: ['Stale periods'] });
    blocks.push({
      kind: 'table',
      columns: [{ label: 'Host' }, { label: 'From' }, { label: 'To' }, { label: 'Length', align: 'right' }, { label: 'Reason' }],
      rows: stale.sort((a, b) => a.fromMs - b.fromMs).map((p) => [[p.host], [isoUtc(p.fromMs)], [isoUtc(p.toMs)], [duration(p.toMs - p.fromMs)], [orDash(p.reason)]]),
    });
  }
  const events = hosts.flatMap((h) => h.connectionEvents.map((ev) => ({ host: h.host, ...ev })));
  if (events.length) {
    blocks.push({ kind: 'heading', text: ['Connection events'] });
    blocks.push({
      kind: 'table',
      columns: [{ label: 'Time' }, { label: 'Host' }, { label: 'Event' }, { label: 'Detail' }],
      rows: events.sort((a, b) => a.at - b.at).map((ev) => [[isoUtc(ev.at)], [ev.host], [ev.type], [orDash(ev.detail)]]),
    });
  }
  return { id: 'health', title: 'Health', pageBreak: false, blocks };
}

export function chartsSection(charts: readonly EvidenceChart[]): DocSection {
  return {
    id: 'charts',
    title: 'Charts',
    pageBreak: true,
    blocks: [
      { kind: 'p', content: ['Times on the charts are UTC. A break in a line is a gap in the data, not a zero.'] },
      ...charts.map((chart): Block => ({ kind: 'chart', chart, caption: chart.host ? `${chart.title} — ${chart.host} (${chart.unit})` : `${chart.title} (${chart.unit})`, alt: chartDescription(chart) })),
    ],
  };
}
