import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { Emitter, FakeClock, silentLogger, type Logger } from '../../../src-main/core/base/index.js';
import { ConfigService } from '../../../src-main/core/config/index.js';
import { requestWindows } from '../../../src-main/core/proxy/index.js';
import { openStore, type Store } from '../../../src-main/core/store/index.js';
import { TelemetryService } from '../../../src-main/core/telemetry/index.js';
import type { FleetSnapshot } from '../../../src-preload/contract/index.js';
import { fleetStateOf } from '../../helpers/fleet-state.js';
import type { FleetState } from '../../../src-main/core/fleet/index.js';

// Issue #27 finding 5: a baseline's `setAt` is when the operator (or a
// benchmark) set it. Telemetry is started twice over the same SQLite file, an
// hour apart: the second start must list the stored time, not its own.

const T0 = 1_700_000_000_000;
let dir = '';
afterEach(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = '';
});

function startTelemetry(store: Store, clock: FakeClock, logger: Logger = silentLogger): TelemetryService {
  const ticks = new Emitter<FleetSnapshot>();
  // Not an object literal: `startedAt` is passed to consoles whose telemetry still reads it.
  const deps = {
    store,
    config: new ConfigService({ path: join(dir, 'none.yaml'), home: dir }),
    fleet: { onDidRound: (l: (s: FleetState) => void) => ticks.on((s) => l(fleetStateOf(s))) },
    proxy: null,
    requests: requestWindows(store.db),
    notices: { notify: () => undefined },
    emit: () => undefined,
    clock,
    logger,
    startedAt: clock.now(),
  };
  return new TelemetryService(deps);
}

describe('baselines over a console restart', () => {
  it('keep the time they were set', async () => {
    dir = mkdtempSync(join(tmpdir(), 'gc-baselines-'));
    const file = join(dir, 'console.db');
    const clock = new FakeClock(T0);
    let store = openStore({ file, clock });
    let telemetry = startTelemetry(store, clock);
    telemetry.setBaseline('qwen', 72.5, 'manual', 'operator:test@cli');
    clock.advance(5_000);
    telemetry.setBaseline('coder', 40, 'benchmark', 'operator:test@cli');
    await telemetry.dispose();
    store.close();

    clock.advance(3_600_000);
    store = openStore({ file, clock });
    telemetry = startTelemetry(store, clock);
    expect(telemetry.alerts.listBaselines()).toEqual([
      // Issue #30: each keeps its per-sequence levels too (a manual figure is one level at concurrency 1 unless given).
      { model: 'qwen', tokPerS: 72.5, source: 'manual', setAt: T0, levels: [{ concurrency: 1, perSeqTokPerS: 72.5 }] },
      { model: 'coder', tokPerS: 40, source: 'benchmark', setAt: T0 + 5_000, levels: [{ concurrency: 1, perSeqTokPerS: 40 }] },
    ]);

    // A new baseline after the restart: the others keep their times on disk too.
    telemetry.setBaseline('ocr', 10, 'manual', 'operator:test@cli');
    await telemetry.dispose();
    store.close();
    clock.advance(60_000);
    store = openStore({ file, clock });
    telemetry = startTelemetry(store, clock);
    expect(telemetry.alerts.listBaselines().map((b) => [b.model, b.setAt])).toEqual([
      ['qwen', T0],
      ['coder', T0 + 5_000],
      ['ocr', T0 + 3_605_000],
    ]);
    await telemetry.dispose();
    store.close();
  });

  it('a stored row that cannot be read is logged and kept as it was, not dropped by the next write', async () => {
    dir = mkdtempSync(join(tmpdir(), 'gc-baselines-'));
    const file = join(dir, 'console.db');
    const clock = new FakeClock(T0);
    const store = openStore({ file, clock });
    const odd = { model: 'qwen', tokPerS: 'fast', source: 'manual', setAt: T0 };
    store.settings.set('alerts.baselines', [odd, { model: 'coder', tokPerS: 40, source: 'manual', setAt: T0 - 1_000 }]);
    const warnings: string[] = [];
    const logger: Logger = { ...silentLogger, warn: (msg: string) => void warnings.push(msg), child: () => logger };
    const telemetry = startTelemetry(store, clock, logger);
    expect(telemetry.alerts.listBaselines()).toEqual([{ model: 'coder', tokPerS: 40, source: 'manual', setAt: T0 - 1_000 }]);
    // A row stored before per-sequence levels (issue #30) is kept and listed, and said to be not compared.
    expect(warnings).toEqual(['kept an unreadable stored baseline aside', 'a stored baseline has no per-sequence levels: kept, not compared until it is set again']);
    telemetry.setBaseline('ocr', 10, 'manual', 'operator:test@cli');
    expect(store.settings.get<unknown[]>('alerts.baselines')).toContainEqual(odd);
    await telemetry.dispose();
    store.close();
  });
});
