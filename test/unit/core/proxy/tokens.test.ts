import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { FakeClock } from '../../../../src-main/core/base/index.js';
import { VERSION_CHECK_MS, createTokenRepository, hashToken } from '../../../../src-main/core/proxy/index.js';
import { openStore, type Store } from '../../../../src-main/core/store/index.js';
import { DEFAULT_TOKEN_LIMITS } from '../../../../src-preload/contract/index.js';

// Checks are cached; a revocation must still be refused promptly: at once through
// the repository, within VERSION_CHECK_MS when another process (the CLI) writes it.

const open: Store[] = [];
let dir = '';
afterEach(() => {
  for (const s of open.splice(0)) s.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = '';
});

function twoConnections(): { console: Store; cli: Store } {
  dir = mkdtempSync(join(tmpdir(), 'gc-tokens-'));
  const file = join(dir, 'console.db');
  const console = openStore({ file });
  const cli = openStore({ file });
  open.push(console, cli);
  return { console, cli };
}

describe('token checks', () => {
  it('a token revoked through the repository is refused on the next check', () => {
    const clock = new FakeClock();
    const { console } = twoConnections();
    const tokens = createTokenRepository(console.db, clock);
    const { token } = tokens.create('app', 'batch');
    expect(tokens.check(token)).toEqual({ ok: true, id: hashToken(token), name: 'app', maxClass: 'batch', limits: DEFAULT_TOKEN_LIMITS });
    tokens.revoke('app');
    expect(tokens.check(token)).toEqual({ ok: false, reason: 'revoked', name: 'app' });
  });

  it('a revocation by another process is refused within VERSION_CHECK_MS', () => {
    const clock = new FakeClock();
    const { console, cli } = twoConnections();
    const tokens = createTokenRepository(console.db, clock);
    const { token } = tokens.create('app', 'interactive');
    expect(tokens.check(token).ok).toBe(true);
    createTokenRepository(cli.db, clock).revoke('app');
    // However many requests come in meanwhile, the answer changes once the interval is over.
    for (let waited = 0; waited < VERSION_CHECK_MS; waited += 10) {
      tokens.check(token);
      clock.advance(10);
    }
    expect(tokens.check(token)).toEqual({ ok: false, reason: 'revoked', name: 'app' });
  });

  it('a raw write on the same connection is noticed within VERSION_CHECK_MS too', () => {
    const clock = new FakeClock();
    const { console } = twoConnections();
    const tokens = createTokenRepository(console.db, clock);
    const { token } = tokens.create('app', 'interactive');
    expect(tokens.check(token).ok).toBe(true);
    console.db.prepare('UPDATE client_tokens SET revoked_at = ? WHERE name = ?').run(clock.now(), 'app');
    clock.advance(VERSION_CHECK_MS);
    expect(tokens.check(token)).toMatchObject({ ok: false, reason: 'revoked' });
  });

  it('a token created by another process is accepted, and unknown tokens stay refused', () => {
    const clock = new FakeClock();
    const { console, cli } = twoConnections();
    const tokens = createTokenRepository(console.db, clock);
    expect(tokens.check('gcp_nope')).toEqual({ ok: false, reason: 'unknown' });
    const { token } = createTokenRepository(cli.db, clock).create('later', 'system');
    expect(tokens.check(token)).toEqual({ ok: true, id: hashToken(token), name: 'later', maxClass: 'system', limits: DEFAULT_TOKEN_LIMITS });
    expect(tokens.check('gcp_nope')).toEqual({ ok: false, reason: 'unknown' });
  });
});
