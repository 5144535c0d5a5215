import { describe, expect, it } from 'vitest';
import { invokeChannels, type ReportRequestInput } from '../../../../src-preload/contract/index.js';
import { afterExport, DEFAULT_EXPORT, exportInput } from '../../../../src-renderer/src/features/reports/export-form.js';

const request: ReportRequestInput = { hosts: ['l20-poc'], fromMs: 1_000, toMs: 2_000, live: true };
const exportSchema = invokeChannels['reports.export'].input;

describe('the export form', () => {
  it('defaults to md + html + json, unsigned, into the default folder; the contract accepts it', () => {
    const r = exportInput(request, DEFAULT_EXPORT);
    expect(r).toEqual({ ok: true, input: { request, formats: ['md', 'html', 'json'], sign: null } });
    expect(r.ok && exportSchema.safeParse(r.input).success).toBe(true);
  });

  it('keeps the formats in a fixed order without repeats, and needs at least one', () => {
    const r = exportInput(request, { ...DEFAULT_EXPORT, formats: ['pdf', 'md', 'md'] });
    expect(r.ok && r.input.formats).toEqual(['md', 'pdf']);
    expect(exportInput(request, { ...DEFAULT_EXPORT, formats: [] })).toMatchObject({ ok: false, problems: [expect.stringContaining('at least one')] });
  });

  it('signs with the key file, adding the passphrase only when one was typed', () => {
    const plain = exportInput(request, { ...DEFAULT_EXPORT, sign: true, keyFile: ' /home/op/.ssh/id_ed25519 ' });
    expect(plain.ok && plain.input.sign).toEqual({ keyFile: '/home/op/.ssh/id_ed25519' });
    const enc = exportInput(request, { ...DEFAULT_EXPORT, sign: true, keyFile: '/k', passphrase: ' secret ' });
    expect(enc.ok && enc.input.sign).toEqual({ keyFile: '/k', passphrase: ' secret ' });
    expect(enc.ok && exportSchema.safeParse(enc.input).success).toBe(true);
    expect(exportInput(request, { ...DEFAULT_EXPORT, sign: true, keyFile: '  ' })).toMatchObject({ ok: false, problems: [expect.stringContaining('Signing key')] });
    // Signing off: a key path or passphrase left in the form is not sent.
    expect(exportInput(request, { ...DEFAULT_EXPORT, sign: false, keyFile: '/k', passphrase: 'p' })).toMatchObject({ ok: true, input: { sign: null } });
  });

  it('signs with the ssh-agent without a key path, naming a key only when one was typed', () => {
    const first = exportInput(request, { ...DEFAULT_EXPORT, sign: true, signWith: 'agent', keyFile: '', passphrase: 'left over' });
    expect(first.ok && first.input.sign).toEqual({ agent: true });
    const named = exportInput(request, { ...DEFAULT_EXPORT, sign: true, signWith: 'agent', agentKey: ' SHA256:abc ' });
    expect(named.ok && named.input.sign).toEqual({ agent: true, key: 'SHA256:abc' });
    expect(named.ok && exportSchema.safeParse(named.input).success).toBe(true);
  });

  it('sends an output folder only when one is given', () => {
    const r = exportInput(request, { ...DEFAULT_EXPORT, outDir: ' /srv/reports ' });
    expect(r.ok && r.input.outDir).toBe('/srv/reports');
    expect(exportInput(request, { ...DEFAULT_EXPORT, outDir: '  ' })).toMatchObject({ ok: true, input: expect.not.objectContaining({ outDir: expect.anything() }) });
  });

  it('drops the passphrase after an export and keeps everything else', () => {
    const d = { ...DEFAULT_EXPORT, sign: true, keyFile: '/k', passphrase: 'p', outDir: '/o' };
    expect(afterExport(d)).toEqual({ ...d, passphrase: '' });
    expect(afterExport(DEFAULT_EXPORT)).toBe(DEFAULT_EXPORT);
  });
});
