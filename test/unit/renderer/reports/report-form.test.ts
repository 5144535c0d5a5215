import { describe, expect, it } from 'vitest';
import { invokeChannels, REPORT_SECTIONS } from '../../../../src-preload/contract/index.js';
import {
  autoPreviewKey,
  DEFAULT_REPORT_FORM,
  fromLocalInput,
  requestFromForm,
  toggled,
  toLocalInput,
  withPreset,
  type ReportForm,
} from '../../../../src-renderer/src/features/reports/report-form.js';

const NOW = Date.UTC(2025, 10, 30, 18, 0, 0);
const H = 3_600_000;
const previewInput = invokeChannels['reports.preview'].input;

describe('the report request form', () => {
  it('defaults to every host, the last shift, every section and live checks; the contract accepts it', () => {
    const r = requestFromForm(DEFAULT_REPORT_FORM, NOW);
    expect(r).toEqual({ ok: true, request: { hosts: [], fromMs: NOW - 8 * H, toMs: NOW, sections: [...REPORT_SECTIONS], live: true } });
    expect(r.ok && previewInput.safeParse({ request: r.request }).success).toBe(true);
  });

  it('maps each preset to a window ending now', () => {
    for (const [preset, ms] of [['1h', H], ['8h', 8 * H], ['24h', 24 * H], ['7d', 7 * 24 * H]] as const) {
      const r = requestFromForm({ ...DEFAULT_REPORT_FORM, preset }, NOW);
      expect(r.ok && [r.request.fromMs, r.request.toMs], preset).toEqual([NOW - ms, NOW]);
    }
  });

  it('trims the title, leaves it out when empty, and refuses one over 200 characters', () => {
    const r = requestFromForm({ ...DEFAULT_REPORT_FORM, title: '  Night shift  ' }, NOW);
    expect(r.ok && r.request.title).toBe('Night shift');
    expect(requestFromForm({ ...DEFAULT_REPORT_FORM, title: '   ' }, NOW)).toMatchObject({ ok: true, request: expect.not.objectContaining({ title: expect.anything() }) });
    expect(requestFromForm({ ...DEFAULT_REPORT_FORM, title: 'x'.repeat(201) }, NOW)).toMatchObject({ ok: false, problems: [expect.stringContaining('at most 200')] });
  });

  it('sends the chosen hosts and sections (in the contract order) and the live switch', () => {
    const form: ReportForm = { ...DEFAULT_REPORT_FORM, hosts: ['tri-gpu'], sections: ['gates', 'inventory'], live: false };
    const r = requestFromForm(form, NOW);
    expect(r.ok && r.request).toMatchObject({ hosts: ['tri-gpu'], sections: ['inventory', 'gates'], live: false });
    expect(r.ok && previewInput.safeParse({ request: r.request }).success).toBe(true);
  });

  it('refuses no sections, and a custom window that is empty, malformed or backwards', () => {
    expect(requestFromForm({ ...DEFAULT_REPORT_FORM, sections: [] }, NOW)).toEqual({ ok: false, problems: ['Sections: choose at least one.'] });
    const custom = { ...DEFAULT_REPORT_FORM, preset: 'custom' as const };
    expect(requestFromForm({ ...custom, customFrom: '', customTo: '2025-11-30T10:00' }, NOW)).toMatchObject({ ok: false, problems: ['From: enter a date and time.'] });
    expect(requestFromForm({ ...custom, customFrom: '2025-11-30T10:00', customTo: 'soon' }, NOW)).toMatchObject({ ok: false, problems: ['To: enter a date and time.'] });
    expect(requestFromForm({ ...custom, customFrom: '2025-11-30T10:00', customTo: '2025-11-30T10:00' }, NOW)).toMatchObject({ ok: false, problems: ['From must be before To.'] });
    const ok = requestFromForm({ ...custom, customFrom: '2025-11-30T06:00', customTo: '2025-11-30T14:00' }, NOW);
    expect(ok.ok && ok.request.toMs - ok.request.fromMs).toBe(8 * H);
    expect(ok.ok && ok.request.fromMs).toBe(new Date(2025, 10, 30, 6, 0).getTime());
  });

  it('switching to custom starts from the window the preset showed', () => {
    const f = withPreset({ ...DEFAULT_REPORT_FORM, preset: '1h' }, 'custom', NOW);
    expect(f.preset).toBe('custom');
    expect(fromLocalInput(f.customFrom)).toBe(Math.floor((NOW - H) / 60_000) * 60_000);
    expect(fromLocalInput(f.customTo)).toBe(Math.floor(NOW / 60_000) * 60_000);
    // Via a preset, custom starts again from that preset's window; custom → custom keeps what was typed.
    const edited = { ...f, customFrom: '2025-11-01T00:00' };
    expect(withPreset(withPreset(edited, '24h', NOW), 'custom', NOW).customFrom).not.toBe('2025-11-01T00:00');
    expect(withPreset(edited, 'custom', NOW).customFrom).toBe('2025-11-01T00:00');
  });
});

describe('datetime-local values', () => {
  it('round-trips through local time at minute precision', () => {
    const ms = new Date(2025, 0, 5, 7, 3).getTime();
    expect(toLocalInput(ms)).toBe('2025-01-05T07:03');
    expect(fromLocalInput('2025-01-05T07:03')).toBe(ms);
    expect(fromLocalInput('2025-01-05T07:03:30')).toBe(ms + 30_000);
  });

  it('refuses malformed and impossible dates', () => {
    for (const v of ['', '2025-01-05', '2025-1-5T7:03', '2025-02-31T10:00', '2025-13-01T10:00', 'nonsense']) expect(fromLocalInput(v), v).toBeNull();
  });
});

describe('helpers', () => {
  it('toggled adds once, removes, and keeps a given order', () => {
    expect(toggled(['a'], 'b', true)).toEqual(['a', 'b']);
    expect(toggled(['a', 'b'], 'b', true)).toEqual(['a', 'b']);
    expect(toggled(['a', 'b'], 'a', false)).toEqual(['b']);
    expect(toggled(['c', 'a'], 'b', true, ['a', 'b', 'c'])).toEqual(['a', 'b', 'c']);
  });

  it('the automatic preview is off with live checks, and its key follows what the report depends on', () => {
    expect(autoPreviewKey(DEFAULT_REPORT_FORM)).toBeNull();
    const off = { ...DEFAULT_REPORT_FORM, live: false };
    const key = autoPreviewKey(off);
    expect(key).not.toBeNull();
    expect(autoPreviewKey({ ...off, title: ' ' })).toBe(key);
    expect(autoPreviewKey({ ...off, hosts: ['l20-poc'] })).not.toBe(key);
    expect(autoPreviewKey({ ...off, preset: '1h' })).not.toBe(key);
    expect(autoPreviewKey({ ...off, sections: ['gates'] })).not.toBe(key);
  });

  it('log lines are off by default (the request carries no includeLogs) and, ticked, ask for them and preview on the button only', () => {
    expect(DEFAULT_REPORT_FORM.includeLogs).toBe(false);
    const plain = requestFromForm({ ...DEFAULT_REPORT_FORM, live: false }, NOW);
    expect(plain.ok && 'includeLogs' in plain.request).toBe(false);
    expect(plain.ok && previewInput.parse({ request: plain.request }).request.includeLogs).toBe(false);
    const logs = requestFromForm({ ...DEFAULT_REPORT_FORM, live: false, includeLogs: true }, NOW);
    expect(logs.ok && logs.request.includeLogs).toBe(true);
    expect(autoPreviewKey({ ...DEFAULT_REPORT_FORM, live: false, includeLogs: true })).toBeNull();
  });
});
