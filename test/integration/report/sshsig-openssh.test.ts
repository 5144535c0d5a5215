// Our SSHSIG against the real OpenSSH: `ssh-keygen -Y verify` accepts what we
// sign (every key type, an encrypted OpenSSH key, PEM and PKCS#8 keys) and refuses it
// after a one-byte change; our verifier accepts what `ssh-keygen -Y sign` makes.
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ReportErrorCode } from '../../../src-main/core/report/errors.js';
import { allowedSignersLine } from '../../../src-main/core/report/allowed-signers.js';
import { loadSigner, verifySshsig } from '../../../src-main/core/report/sshsig.js';

const SSH_KEYGEN = '/usr/bin/ssh-keygen';
const hasKeygen = existsSync(SSH_KEYGEN);
const NS = 'gpu-console-evidence';
const PRINCIPAL = 'auditor@example.com';
const PASSPHRASE = 'open sesame 42';

const dir = mkdtempSync(join(tmpdir(), 'gpu-console-sshsig-openssh-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

interface KeySpec {
  name: string;
  args: string[];
  passphrase?: string;
}

const KEYS: KeySpec[] = [
  { name: 'ed25519', args: ['-t', 'ed25519'] },
  { name: 'ecdsa-256', args: ['-t', 'ecdsa', '-b', '256'] },
  { name: 'ecdsa-384', args: ['-t', 'ecdsa', '-b', '384'] },
  { name: 'ecdsa-521', args: ['-t', 'ecdsa', '-b', '521'] },
  { name: 'rsa-3072', args: ['-t', 'rsa', '-b', '3072'] },
  { name: 'ed25519-encrypted', args: ['-t', 'ed25519'], passphrase: PASSPHRASE },
  { name: 'rsa-pem', args: ['-t', 'rsa', '-b', '2048', '-m', 'PEM'] },
  { name: 'rsa-pkcs8', args: ['-t', 'rsa', '-b', '2048', '-m', 'PKCS8'] },
  { name: 'ecdsa-pkcs8-encrypted', args: ['-t', 'ecdsa', '-b', '256', '-m', 'PKCS8'], passphrase: PASSPHRASE },
];

const made = new Map<string, string>();
/** Generates the key once (ssh-keygen), returning its private key path. */
function key(spec: KeySpec): string {
  let file = made.get(spec.name);
  if (!file) {
    file = join(dir, spec.name);
    execFileSync(SSH_KEYGEN, ['-q', ...spec.args, '-N', spec.passphrase ?? '', '-C', spec.name, '-f', file]);
    made.set(spec.name, file);
  }
  return file;
}

function keygen(args: string[], input?: Buffer): { status: number | null; out: string } {
  const r = spawnSync(SSH_KEYGEN, args, { input: input ?? Buffer.alloc(0), encoding: 'buffer' });
  return { status: r.status, out: `${r.stdout.toString()}${r.stderr.toString()}` };
}

/** `ssh-keygen -Y verify` of `sigFile` over `message` for PRINCIPAL against `allowedFile`. */
function opensshVerify(allowedFile: string, sigFile: string, message: Buffer, principal = PRINCIPAL): { status: number | null; out: string } {
  return keygen(['-Y', 'verify', '-f', allowedFile, '-I', principal, '-n', NS, '-s', sigFile], message);
}

const message = Buffer.from('{"audit":{"headSeq":17},"schema":"gpu-console.evidence-manifest/1"}\n');

describe.skipIf(!hasKeygen)(`SSHSIG against OpenSSH (${hasKeygen ? SSH_KEYGEN : `skipped: ${SSH_KEYGEN} not found; install openssh-client`})`, () => {
  it.each(KEYS)('$name: ssh-keygen -Y verify accepts our signature, and refuses it after one changed byte', async (spec) => {
    const file = key(spec);
    const signer = await loadSigner(file, spec.passphrase);
    const pub = readFileSync(`${file}.pub`, 'utf8').trim().split(' ');
    expect(signer.publicKeyLine).toBe(`${pub[0]} ${pub[1]}`);
    // Fingerprint exactly as `ssh-keygen -l` prints it.
    expect(execFileSync(SSH_KEYGEN, ['-l', '-f', `${file}.pub`]).toString().split(' ')[1]).toBe(signer.fingerprint);

    const sigFile = join(dir, `${spec.name}.msg.sig`);
    writeFileSync(sigFile, signer.sign(message, NS));
    const allowed = join(dir, `${spec.name}.allowed`);
    writeFileSync(allowed, `${allowedSignersLine(PRINCIPAL, signer.publicKeyLine)}\n`);

    const good = opensshVerify(allowed, sigFile, message);
    expect(good.out).toContain(`Good "${NS}" signature for ${PRINCIPAL}`);
    expect(good.status).toBe(0);

    const changed = Buffer.from(message);
    changed[20]! ^= 0x01;
    const bad = opensshVerify(allowed, sigFile, changed);
    expect(bad.status).not.toBe(0);
    expect(bad.out).not.toContain('Good');
  });

  it.each(KEYS.map((k) => ({ ...k, hashalg: 'sha512' })).concat([{ ...KEYS[0]!, hashalg: 'sha256' }, { ...KEYS[4]!, hashalg: 'sha256' }]))(
    '$name: our verifier accepts ssh-keygen -Y sign ($hashalg) and refuses it for another message or namespace',
    async (spec) => {
      const file = key(spec);
      const msgFile = join(dir, `${spec.name}-${spec.hashalg}.txt`);
      writeFileSync(msgFile, message);
      // -Y sign reads the passphrase from the terminal only; sign with a decrypted copy for the encrypted key.
      let signWith = file;
      if (spec.passphrase) {
        signWith = join(dir, `${spec.name}-decrypted`);
        writeFileSync(signWith, readFileSync(file), { mode: 0o600 });
        execFileSync(SSH_KEYGEN, ['-q', '-p', '-P', spec.passphrase, '-N', '', '-f', signWith]);
      }
      execFileSync(SSH_KEYGEN, ['-q', '-Y', 'sign', '-f', signWith, '-n', NS, '-O', `hashalg=${spec.hashalg}`, msgFile]);
      const armored = readFileSync(`${msgFile}.sig`, 'utf8');

      const signer = await loadSigner(file, spec.passphrase);
      expect(verifySshsig(message, armored, NS)).toEqual({ ok: true, publicKeyLine: signer.publicKeyLine, fingerprint: signer.fingerprint });
      const changed = Buffer.from(message);
      changed[0]! ^= 0x20;
      expect(verifySshsig(changed, armored, NS)).toMatchObject({ ok: false });
      expect(verifySshsig(message, armored, 'file')).toMatchObject({ ok: false, reason: expect.stringContaining('namespace') });
    },
  );

  it('an ed25519 signature is byte for byte what ssh-keygen -Y sign writes (ed25519 is deterministic)', async () => {
    const file = key(KEYS[0]!);
    const msgFile = join(dir, 'deterministic.txt');
    writeFileSync(msgFile, message);
    execFileSync(SSH_KEYGEN, ['-q', '-Y', 'sign', '-f', file, '-n', NS, msgFile]);
    const signer = await loadSigner(file);
    expect(signer.sign(message, NS)).toBe(readFileSync(`${msgFile}.sig`, 'utf8'));
  });

  it('a principal with a space is quoted so that ssh-keygen reads it', async () => {
    const file = key(KEYS[1]!);
    const signer = await loadSigner(file);
    const sigFile = join(dir, 'spaced.sig');
    writeFileSync(sigFile, signer.sign(message, NS));
    const allowed = join(dir, 'spaced.allowed');
    writeFileSync(allowed, `${allowedSignersLine('Alice Smith', signer.publicKeyLine)}\n`);
    const r = opensshVerify(allowed, sigFile, message, 'Alice Smith');
    expect(r.out).toContain(`Good "${NS}" signature for Alice Smith`);
    expect(r.status).toBe(0);
  });

  it('an encrypted OpenSSH key: no passphrase and a wrong one are coded errors', async () => {
    const file = key(KEYS[5]!);
    await expect(loadSigner(file)).rejects.toMatchObject({ code: ReportErrorCode.SIGNING_KEY_ENCRYPTED });
    const err = await loadSigner(file, 'wrong passphrase').catch((e: unknown) => e);
    expect(err).toMatchObject({ code: ReportErrorCode.SIGNING_KEY_PASSPHRASE_INCORRECT, message: expect.stringContaining(file) });
    expect(JSON.stringify(err)).not.toContain('wrong passphrase');
  });
});
