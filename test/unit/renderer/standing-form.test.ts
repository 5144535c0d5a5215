import { describe, expect, it } from 'vitest';
import { invokeChannels, type LifecycleTarget } from '../../../src-preload/contract/index.js';
import { checkStanding, EMPTY_STANDING, standingStatus } from '../../../src-renderer/src/features/actions/standing-form.js';

const targets: LifecycleTarget[] = [
  { upstream: 'l20-poc/qwen', label: 'l20-poc', serviceId: 'qwen', model: 'Q', driver: 'vllm-sleep', supported: ['wake', 'sleep', 'offload', 'restart'] },
  { upstream: 'tri-gpu/gemma', label: 'tri-gpu', serviceId: 'gemma', model: 'G', driver: 'llama-server', supported: ['restart'] },
];
const NOW = 1_700_000_000_000;

describe('the standing-approval form', () => {
  it('builds a grantStanding input the contract accepts (hours → minutes, no label for wake)', () => {
    const r = checkStanding({ upstream: 'l20-poc/qwen', kind: 'wake', hours: '8', typedLabel: 'ignored' }, targets, NOW);
    expect(r.ok && r.input).toEqual({ upstream: 'l20-poc/qwen', kind: 'wake', durationMinutes: 480 });
    expect(r.ok && r.summary).toMatch(/wake of l20-poc\/qwen .* next 8 h/);
    expect(invokeChannels['actions.grantStanding'].input.safeParse(r.ok ? r.input : null).success).toBe(true);
  });

  it('destructive kinds need the host label typed exactly', () => {
    expect(checkStanding({ upstream: 'l20-poc/qwen', kind: 'restart', hours: '2', typedLabel: 'L20-POC' }, targets, NOW)).toMatchObject({ ok: false, problems: [expect.stringContaining('"l20-poc"')] });
    const ok = checkStanding({ upstream: 'l20-poc/qwen', kind: 'offload', hours: '2', typedLabel: 'l20-poc' }, targets, NOW);
    expect(ok.ok && ok.input).toEqual({ upstream: 'l20-poc/qwen', kind: 'offload', durationMinutes: 120, typedLabel: 'l20-poc' });
  });

  it('refuses an empty form, unsupported kinds and bad durations', () => {
    expect(checkStanding(EMPTY_STANDING, targets, NOW)).toMatchObject({ ok: false, problems: ['Choose a service.', 'Choose an action kind.'] });
    expect(checkStanding({ upstream: 'tri-gpu/gemma', kind: 'sleep', hours: '1', typedLabel: '' }, targets, NOW)).toMatchObject({ ok: false, problems: [expect.stringContaining('cannot sleep')] });
    for (const hours of ['0', '25', '1.5', '', 'abc', '-3']) {
      expect(checkStanding({ upstream: 'l20-poc/qwen', kind: 'wake', hours, typedLabel: '' }, targets, NOW).ok, hours).toBe(false);
    }
    expect(checkStanding({ upstream: 'l20-poc/qwen', kind: 'wake', hours: '24', typedLabel: '' }, targets, NOW).ok).toBe(true);
  });

  it('shows expiry honestly', () => {
    expect(standingStatus({ expiresAt: NOW + 8 * 3_600_000, revokedAt: null }, NOW + 60_000)).toBe('expires in 7 h 59 min');
    expect(standingStatus({ expiresAt: NOW + 90_000, revokedAt: null }, NOW)).toBe('expires in 2 min');
    expect(standingStatus({ expiresAt: NOW, revokedAt: null }, NOW)).toBe('expired');
    expect(standingStatus({ expiresAt: NOW + 1e9, revokedAt: NOW }, NOW)).toBe('revoked');
  });
});
