// verify() rebuilds each row's hash preimage from the stored text (without
// encoding the payload again); it must give the same bytes auditHash() hashed
// at append for every value canonical JSON allows.
import { describe, expect, it } from 'vitest';
import { FakeClock } from '../../../../src-main/core/base/index.js';
import { auditHash, openStore, verifyAudit } from '../../../../src-main/core/store/index.js';
import { auditType } from '../../../helpers/audit-types.js';

describe('audit verify', () => {
  it('accepts rows with awkward text and numbers, and recomputes the same hash auditHash gives', () => {
    const clock = new FakeClock(1_700_000_000_123);
    const store = openStore({ file: ':memory:', clock });
    const payloads: Record<string, unknown>[] = [
      { quote: 'say "hi"\\', unicode: 'Größe ✓ 日本 \u{1F680}', lone: '\ud800', ctrl: 'a\u0001b\nc\u2028' },
      { n: [0, -1.5e-7, 1e21, 123456789.125, -0], nested: { z: null, a: [true, false, {}], ' ': '' } },
      { b: 1, a: 2, B: 3, _: 4, é: 5, '10': 6, '9': 7 },
      {},
    ];
    const targets = [null, 'host "x"', 'h/ü', undefined];
    payloads.forEach((payload, i) => {
      clock.advance(1_000 + i);
      const e = store.audit.append({ type: auditType(`test.kind-${i}`), actor: i % 2 ? 'operator:zoë' : 'system', target: targets[i], payload });
      expect(e.hash).toBe(auditHash(e.prevHash, e));
    });
    expect(store.audit.verify()).toMatchObject({ ok: true, count: payloads.length });
    store.close();
  });
});

describe('a broken chain pages the on-call', () => {
  it('verifyAudit sends a critical audit.verify-failed notice naming where the chain breaks; an intact one sends nothing', () => {
    const store = openStore({ file: ':memory:', clock: new FakeClock(1_700_000_000_000) });
    const sent: { key: string; severity: string; event?: string; body: string; route: string }[] = [];
    const notices = { notify: (n: (typeof sent)[number]) => void sent.push(n) };
    for (let i = 0; i < 3; i++) store.audit.append({ type: auditType('test.row'), actor: 'system', payload: { i } });
    expect(verifyAudit(store, notices)).toMatchObject({ ok: true, count: 3 });
    expect(sent).toEqual([]);
    // Someone with file access drops the append-only triggers and edits a row behind the console's back.
    store.db.exec('DROP TRIGGER IF EXISTS audit_events_no_update; DROP TRIGGER IF EXISTS audit_events_no_delete;');
    store.db.prepare('UPDATE audit_events SET payload = ? WHERE seq = 2').run(JSON.stringify({ i: 99 }));
    const result = verifyAudit(store, notices);
    expect(result).toMatchObject({ ok: false, brokenAt: 2 });
    expect(sent).toEqual([expect.objectContaining({ severity: 'critical', event: 'audit.verify-failed', route: 'audit', key: 'audit-verify:2', body: expect.stringMatching(/breaks at event 2 \(hash-mismatch; the 1 before it verify\)/) })]);
    store.close();
  });
});
