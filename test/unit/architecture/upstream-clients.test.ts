import { readFileSync } from 'node:fs';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { rel, sourceFiles } from '../../helpers/imports.js';

// "One upstream client per service endpoint" (issue #28 item 4): every HTTP
// client main makes lives in src-main/core/upstream/ (UpstreamClient: the one
// keep-alive rule, the one stale-connection retry, deadlines, body caps, the
// on-prem guard, one classifier). Anywhere else in src-main, a file that brings
// in a way to open connections of its own — `new Agent(`/`new Pool(`/`new
// Client(`, undici's `request`/`fetch`/`stream`, node:http(s)'s `request`/`get`
// or the global `fetch(` — is an offender, unless listed below with why its
// destination is no model server. Read with the TypeScript parser, so aliases
// (`Agent as HttpAgent`) and type-only imports are told apart.

/** Files allowed an HTTP client of their own, and why. */
const ALLOWED: Record<string, string> = {
  'src-main/core/notify/destination.ts':
    "notification webhooks (Slack, ntfy, …) are not model servers: its Agent pins each connection to the address the destination's SSRF rule checked",
  'src-main/cli/bridge-client.ts': "the CLI talks to the running console's own web bridge on loopback, not to a model server",
  'src-main/core/ssh/tunnel-gate.ts': "a tunnel's public port relays operators' and apps' requests to the private socket; the console's own calls never pass it",
};
/** Folders allowed, and why. */
const ALLOWED_DIRS: Record<string, string> = {
  'src-main/core/upstream/': 'the one place that makes dispatchers',
  'src-main/demo/': "the demo fleet's traffic generator stands in for outside clients of the simulated servers; it is no part of the console",
};

const CLIENT_MODULES = new Set(['undici', 'node:http', 'node:https', 'http', 'https']);
/** Names that open connections (a constructor or a call); types, errors and servers are fine. */
const CLIENT_NAMES = new Set([
  'Agent',
  'Pool',
  'Client',
  'BalancedPool',
  'ProxyAgent',
  'EnvHttpProxyAgent',
  'RetryAgent',
  'request',
  'get',
  'fetch',
  'stream',
  'pipeline',
  'connect',
  'buildConnector',
  'setGlobalDispatcher',
]);

/** `file:line what` for each way to open HTTP connections in `text`. */
export function clientUses(file: string, text: string): string[] {
  const sf = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  const found: string[] = [];
  const at = (node: ts.Node) => `${file}:${sf.getLineAndCharacterOfPosition(node.getStart(sf)).line + 1}`;
  /** Local names bound to a client-making export of a client module. */
  const clientLocals = new Set<string>();
  const visit = (node: ts.Node): void => {
    if (ts.isImportDeclaration(node) && ts.isStringLiteral(node.moduleSpecifier) && CLIENT_MODULES.has(node.moduleSpecifier.text)) {
      const clause = node.importClause;
      const mod = node.moduleSpecifier.text;
      if (clause && !clause.isTypeOnly) {
        if (clause.name) found.push(`${at(node)} imports the default export of ${mod}`);
        const bindings = clause.namedBindings;
        if (bindings && ts.isNamespaceImport(bindings)) found.push(`${at(node)} imports all of ${mod} as ${bindings.name.text}`);
        if (bindings && ts.isNamedImports(bindings)) {
          for (const el of bindings.elements) {
            const name = (el.propertyName ?? el.name).text;
            if (el.isTypeOnly || !CLIENT_NAMES.has(name)) continue;
            clientLocals.add(el.name.text);
            found.push(`${at(el)} imports ${name} from ${mod}`);
          }
        }
      }
    }
    if (ts.isNewExpression(node) && ts.isIdentifier(node.expression) && ['Agent', 'Pool', 'Client'].includes(node.expression.text) && !clientLocals.has(node.expression.text)) {
      found.push(`${at(node)} new ${node.expression.text}(`);
    }
    if (ts.isCallExpression(node) && ts.isIdentifier(node.expression) && node.expression.text === 'fetch') found.push(`${at(node)} fetch(`);
    ts.forEachChild(node, visit);
  };
  visit(sf);
  return found;
}

function allowed(file: string): boolean {
  return file in ALLOWED || Object.keys(ALLOWED_DIRS).some((d) => file.startsWith(d));
}

describe('HTTP clients in src-main', () => {
  it('the checker finds every way to open connections in a planted file, and passes types, servers and the client itself', () => {
    const planted = [
      "import { Agent, request as send, type Dispatcher } from 'undici';",
      "import type { Pool } from 'undici';",
      "import { Agent as HttpAgent, createServer, get } from 'node:http';",
      "import * as https from 'node:https';",
      'const a = new Agent();',
      'const p = new Pool("http://x");',
      'void fetch("http://127.0.0.1:8000/v1/models");',
      "import { UpstreamClient } from '../upstream/index.js';",
      'const c = UpstreamClient.forUrl("http://127.0.0.1:1", { onPrem: null, purpose: "probe" });',
    ].join('\n');
    expect(clientUses('planted.ts', planted)).toEqual([
      'planted.ts:1 imports Agent from undici',
      'planted.ts:1 imports request from undici',
      'planted.ts:3 imports Agent from node:http',
      'planted.ts:3 imports get from node:http',
      'planted.ts:4 imports all of node:https as https',
      'planted.ts:6 new Pool(',
      'planted.ts:7 fetch(',
    ]);
  });

  it('reads the whole of src-main, and every allowed file still has the client it is allowed', () => {
    const files = sourceFiles('src-main').map((f) => rel(f));
    expect(files.length).toBeGreaterThan(200);
    for (const file of Object.keys(ALLOWED)) {
      expect(files, `${file} is gone: delete it from ALLOWED`).toContain(file);
      expect(clientUses(file, readFileSync(file, 'utf8')), `${file} makes no HTTP client any more: delete it from ALLOWED`).not.toEqual([]);
    }
  });

  it('none outside core/upstream/ and the listed exceptions: the console calls model servers through UpstreamClient only', () => {
    const offenders = sourceFiles('src-main')
      .map((f) => rel(f))
      .filter((f) => !allowed(f))
      .flatMap((f) => clientUses(f, readFileSync(f, 'utf8')));
    expect(offenders, 'call the server through its UpstreamClient (fleet.upstream(key), or UpstreamClient.forUrl for a configured URL)').toEqual([]);
  });
});

// The `label/serviceId` key was built by template string in 14 places; one function makes it now
// (core/upstream/key.ts), so its shape changes in one place and a key is a type, not any string.
/** `file:line` of each template literal that is exactly `${…label or host…}/${…id…}`: a key built by hand. */
export function handBuiltKeys(file: string, text: string): string[] {
  const found: string[] = [];
  const re = /`\$\{([^}`]+)\}\/\$\{([^}`]+)\}`/g;
  for (let m = re.exec(text); m !== null; m = re.exec(text)) {
    if (/label|host/i.test(m[1]!) && /id\b|Id\b/.test(m[2]!)) found.push(`${file}:${text.slice(0, m.index).split('\n').length} ${m[0]}`);
  }
  return found;
}

describe('upstream keys', () => {
  it('the checker finds a hand-built key and passes messages that mention one', () => {
    const planted = ['const a = `${host.label}/${s.id}`;', 'const m = `no service ${t.host}/${t.serviceId} here`;', 'const b = `${alert.host}/${alert.serviceId}`;', 'const c = `${scope}/${s}`;'].join('\n');
    expect(handBuiltKeys('planted.ts', planted)).toEqual(['planted.ts:1 `${host.label}/${s.id}`', 'planted.ts:3 `${alert.host}/${alert.serviceId}`']);
  });

  it('are made by upstreamKey() only', () => {
    const offenders = sourceFiles('src-main')
      .map((f) => rel(f))
      .filter((f) => f !== 'src-main/core/upstream/key.ts')
      .flatMap((f) => handBuiltKeys(f, readFileSync(f, 'utf8')));
    expect(offenders, 'build the key with upstreamKey(label, serviceId) from core/upstream').toEqual([]);
  });
});
