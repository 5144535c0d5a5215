import { describe, expect, it } from 'vitest';
import { ActionViewSchema, type ActionView } from '../../../../src-preload/contract/index.js';

// The Actions view's interrupted action (issue #33 item 2): each planned
// step's fate in words (an unknown outcome is never shown as done), one
// Verify now button, and what the check saw once someone asked.

// The node typecheck has no JSX, and React's types would hide the DOM's from the e2e tests: the component
// and React are loaded by specifiers it does not resolve (as alert-list.test.ts).
const COMPONENT = '../../../../src-renderer/src/features/actions/InterruptedAction.js';
const REACT = 'react';
const REACT_DOM_SERVER = 'react-dom/server';
type Props = { action: ActionView; checking: boolean; problem: string | null; onVerify(id: string): void; compact?: boolean };
const { InterruptedAction } = (await import(COMPONENT)) as { InterruptedAction: (p: Props) => unknown };
const { createElement } = (await import(REACT)) as { createElement(c: (p: Props) => unknown, p: Props): unknown };
const { renderToStaticMarkup } = (await import(REACT_DOM_SERVER)) as { renderToStaticMarkup(el: unknown): string };

const base = {
  id: 'act_abcdefgh', kind: 'restart', upstream: 'h1/qwen', label: 'h1', serviceId: 'qwen', model: 'Q', driver: 'ssh-command', state: 'interrupted',
  proposer: 'p', reason: 'r', repeats: 0, nonce: null, requiresTypedLabel: true, expectedEffect: 'e', expectedDowntimeMs: 1000, downtimeBasis: 'b',
  steps: [
    { kind: 'drain', text: 'drain h1/qwen', body: null },
    { kind: 'ssh', text: 'docker restart qwen', body: null },
    { kind: 'verify', text: 'verify (health)', body: null },
  ],
  inFlight: 0, queued: 0, createdAt: 1, expiresAt: 2, decidedAt: 1, decision: 'approved', approver: { osUser: 'dana', displayName: 'Dana', via: 'web' },
  standingApprovalId: null, rejectedBy: null, rejectReason: null, withdrawnBy: null, withdrawReason: null, startedAt: 1, finishedAt: 3, progress: null,
  drained: 0, aborted: 0, observed: [], error: 'the console stopped', stepProgress: ['done', 'started', 'not-started'],
};
const interruption = {
  detectedAt: 3, wasState: 'running', lastProgress: 'step 1/1: docker restart qwen',
  steps: [
    { kind: 'drain', text: 'drain h1/qwen', outcome: 'done' },
    { kind: 'ssh', text: 'docker restart qwen', outcome: 'unknown' },
    { kind: 'verify', text: 'verify (health)', outcome: 'not-run' },
  ],
  check: null,
};
const render = (p: Partial<Props> & { action: ActionView }) => renderToStaticMarkup(createElement(InterruptedAction, { checking: false, problem: null, onVerify: () => undefined, ...p }));

describe('an interrupted action in the Actions view', () => {
  it('says which steps were done, which was under way (unknown) and which never ran, with one Verify now button', () => {
    const action = ActionViewSchema.parse({ ...base, interruption });
    const html = render({ action });
    expect(html).toContain('data-outcome="done"');
    expect(html).toMatch(/outcome unknown<\/span> <code>docker restart qwen<\/code><span class="muted"> \(under way when the console stopped\)/);
    expect(html).toMatch(/not done<\/span> <code>verify \(health\)/);
    expect(html).toContain('was running (last: step 1/1: docker restart qwen). It was not resumed');
    expect(html.match(/data-testid="verify-now-act_abcdefgh"/g)).toHaveLength(1);
    expect(html).not.toContain('interrupted-check');
    expect(render({ action, checking: true })).toContain('Checking the service…');
  });

  it('shows what Verify now saw and who asked', () => {
    const action = ActionViewSchema.parse({ ...base, interruption: { ...interruption, check: { at: 5, by: 'operator:dana@web', ok: false, observed: ['✗ health: no answer'] } } });
    const html = render({ action });
    expect(html).toContain('data-ok="false"');
    expect(html).toContain('does not look as the restart promised');
    expect(html).toContain('operator:dana@web');
    expect(html).toContain('✗ health: no answer');
    // In a history row it folds away, the verdict in its summary.
    const folded = render({ action, compact: true });
    expect(folded).toMatch(/^<details[^>]*><summary>Interrupted — checked: does NOT look as promised<\/summary>/);
  });

  it('older rows without the field still parse, and render nothing here', () => {
    const { stepProgress: _s, ...old } = base;
    const action = ActionViewSchema.parse({ ...old, state: 'failed' });
    expect(action.interruption).toBeUndefined();
    expect(render({ action })).toBe('');
  });
});
