// Client tokens for the demo's background traffic through the proxy: one per
// class (an interactive chat app, a batch job), kept in the demo folder so a
// restart reuses them instead of piling up tokens. A stored token the proxy no
// longer accepts (revoked from the Tokens panel, a new database) is replaced.
// Demo only: these tokens open nothing but the demo fleet.
import { readFile, writeFile } from 'node:fs/promises';
import type { TrafficVia } from './traffic.js';

/** What the demo needs from the proxy to hold its tokens. */
export interface DemoTokenIssuer {
  createToken(name: string, maxClass: 'interactive' | 'batch', caller: string): { token: string };
  revokeToken(name: string, caller: string): unknown;
  acceptsToken(token: string): boolean;
}

export const DEMO_TRAFFIC_CLIENTS = { interactive: 'demo-app-chat', batch: 'demo-app-batch' } as const;

type Tokens = TrafficVia['tokens'];

export async function demoTrafficTokens(issuer: DemoTokenIssuer, file: string): Promise<Tokens> {
  const stored = await readStored(file);
  const out: Partial<Tokens> = {};
  let changed = false;
  for (const cls of ['interactive', 'batch'] as const) {
    const kept = stored?.[cls];
    if (typeof kept === 'string' && issuer.acceptsToken(kept)) {
      out[cls] = kept;
      continue;
    }
    const name = DEMO_TRAFFIC_CLIENTS[cls];
    try {
      issuer.revokeToken(name, 'demo');
    } catch {
      // no live token of that name: nothing to revoke
    }
    out[cls] = issuer.createToken(name, cls, 'demo').token;
    changed = true;
  }
  const tokens = out as Tokens;
  if (changed) await writeFile(file, `${JSON.stringify(tokens)}\n`, { mode: 0o600 });
  return tokens;
}

async function readStored(file: string): Promise<Partial<Record<keyof Tokens, unknown>> | null> {
  try {
    const parsed: unknown = JSON.parse(await readFile(file, 'utf8'));
    return parsed !== null && typeof parsed === 'object' ? (parsed as Partial<Record<keyof Tokens, unknown>>) : null;
  } catch {
    return null; // absent or unreadable: new tokens are made
  }
}
