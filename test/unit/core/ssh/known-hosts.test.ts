import { execFileSync } from 'node:child_process';
import { createHash, createHmac, randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { KnownHosts, hostMatches, knownHostsName, sha256Fingerprint } from '../../../../src-main/core/ssh/index.js';

const dir = mkdtempSync(join(tmpdir(), 'kh-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function newKey(name: string): { line: string; blob: Buffer; keygenFingerprint: string } {
  const file = join(dir, name);
  execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', name, '-f', file]);
  const line = readFileSync(`${file}.pub`, 'utf8').trim();
  const keygenFingerprint = execFileSync('ssh-keygen', ['-l', '-E', 'sha256', '-f', `${file}.pub`]).toString().split(' ')[1]!;
  return { line, blob: Buffer.from(line.split(' ')[1]!, 'base64'), keygenFingerprint };
}

const a = newKey('a');
const b = newKey('b');
const c = newKey('c');
const keyPart = (k: { line: string }) => k.line.split(' ').slice(0, 2).join(' ');

function hashed(name: string): string {
  const salt = randomBytes(20);
  return `|1|${salt.toString('base64')}|${createHmac('sha1', salt).update(name).digest('base64')}`;
}

describe('sha256Fingerprint', () => {
  it('matches ssh-keygen -l exactly', () => {
    expect(sha256Fingerprint(a.blob)).toBe(a.keygenFingerprint);
    expect(sha256Fingerprint(b.blob)).toBe(b.keygenFingerprint);
    expect(a.keygenFingerprint).toMatch(/^SHA256:[A-Za-z0-9+/]{43}$/);
    expect(sha256Fingerprint(a.blob)).toBe('SHA256:' + createHash('sha256').update(a.blob).digest('base64').replace(/=+$/, ''));
  });
});

describe('KnownHosts', () => {
  it('names non-22 ports as [host]:port', () => {
    expect(knownHostsName('gpu1', 22)).toBe('gpu1');
    expect(knownHostsName('10.0.0.5', 2222)).toBe('[10.0.0.5]:2222');
  });

  it('trusts a matching plain entry, flags a different key as changed, unknown hosts as unknown', () => {
    const kh = KnownHosts.parse(
      ['# comment', '', `gpu1,10.0.0.5 ${keyPart(a)} ops@laptop`, `[gpu2]:2222 ${keyPart(b)}`].join('\n'),
    );
    expect(kh.check('gpu1', 22, a.blob).status).toBe('trusted');
    expect(kh.check('10.0.0.5', 22, a.blob).status).toBe('trusted');
    expect(kh.check('gpu2', 2222, b.blob).status).toBe('trusted');
    expect(kh.check('gpu2', 22, b.blob).status).toBe('unknown'); // port 22 is a different name
    const changed = kh.check('gpu1', 22, c.blob);
    expect(changed).toEqual({ status: 'changed', fingerprint: c.keygenFingerprint, knownFingerprints: [a.keygenFingerprint] });
    expect(kh.check('gpu3', 22, a.blob)).toEqual({ status: 'unknown', fingerprint: a.keygenFingerprint });
  });

  it('matches hashed entries (HMAC-SHA1), also ones written by ssh-keygen -H', () => {
    const kh = KnownHosts.parse(`${hashed('[127.0.0.1]:2201')} ${keyPart(a)}\n${hashed('gpu9')} ${keyPart(b)}`);
    expect(kh.check('127.0.0.1', 2201, a.blob).status).toBe('trusted');
    expect(kh.check('127.0.0.1', 2202, a.blob).status).toBe('unknown');
    expect(kh.check('gpu9', 22, c.blob).status).toBe('changed');

    const file = join(dir, 'known_hosts_h');
    execFileSync('/bin/sh', ['-c', `printf '%s\\n' '[gpu7]:2200 ${keyPart(c)}' > ${file} && ssh-keygen -q -H -f ${file} 2>/dev/null`]);
    const fromKeygen = KnownHosts.parse(readFileSync(file, 'utf8'));
    expect(fromKeygen.entries[0]!.patterns[0]).toMatch(/^\|1\|/);
    expect(fromKeygen.check('gpu7', 2200, c.blob).status).toBe('trusted');
  });

  it('refuses @revoked keys for any host and ignores @cert-authority lines', () => {
    const kh = KnownHosts.parse([`@revoked * ${keyPart(a)}`, `gpu1 ${keyPart(a)}`, `@cert-authority *.lab ${keyPart(b)}`].join('\n'));
    expect(kh.check('gpu1', 22, a.blob).status).toBe('revoked');
    expect(kh.check('x.lab', 22, b.blob).status).toBe('unknown');
    expect(kh.malformedLines).toBe(0);
  });

  it('supports wildcards and negation', () => {
    expect(hostMatches(['*.lab', '!bad.lab'], 'gpu1.lab')).toBe(true);
    expect(hostMatches(['*.lab', '!bad.lab'], 'bad.lab')).toBe(false);
    expect(hostMatches(['gpu?'], 'gpu7')).toBe(true);
    expect(hostMatches(['gpu?'], 'gpu17')).toBe(false);
    expect(hostMatches(['GPU1'], 'gpu1')).toBe(true);
  });

  it('skips malformed lines and counts them', () => {
    const kh = KnownHosts.parse(['onlyhost', 'host ssh-ed25519', 'host ssh-ed25519 !!!notbase64', `@weird h ${keyPart(a)}`, `ok ${keyPart(a)}`].join('\n'));
    expect(kh.malformedLines).toBe(4);
    expect(kh.entries).toHaveLength(1);
    expect(kh.keyTypesFor('ok', 22)).toEqual(['ssh-ed25519']);
  });
});
