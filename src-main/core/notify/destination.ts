// Where a channel made in the console may send. A caller of the bridge picks
// that URL, so "Send test" must not become a POST to the console's own
// machine (loopback) or to a cloud metadata service (link-local): those are
// refused, checked on the URL when the channel is saved and again on every
// address the host name resolves to when it is sent (a name that resolved to
// a LAN address at save can later resolve to 127.0.0.1). LAN and public
// addresses stay allowed: a self-hosted ntfy or a webhook receiver on the LAN
// is what an operator uses. config.yaml's channels are the operator's and are
// not checked; `notifications.allowLoopback` lets console channels use loopback.
import { lookup as dnsLookup, type LookupAddress, type LookupAllOptions, type LookupOptions } from 'node:dns';
import { BlockList, isIP, type LookupFunction } from 'node:net';
import { Agent, request, type Dispatcher } from 'undici';
import { AppError } from '../base/index.js';
import { NotifyErrorCode } from './errors.js';
import type { OutboundRequest } from './shapes.js';

/** The rule for one channel's destination; null (config.yaml's channels) means any address. */
export interface DestinationRule {
  allowLoopback: boolean;
}

type Family = 'ipv4' | 'ipv6';
const ranges = (list: [string, number, Family][]): BlockList => {
  const b = new BlockList();
  for (const [net, prefix, family] of list) b.addSubnet(net, prefix, family);
  return b;
};

const LOOPBACK = ranges([['127.0.0.0', 8, 'ipv4'], ['::1', 128, 'ipv6']]);
/** Never a receiver: these reach this machine, a cloud's metadata service or nothing at all. BlockList also matches IPv4-mapped IPv6 (::ffff:a.b.c.d). */
const REFUSED: { what: string; list: BlockList }[] = [
  { what: 'an unspecified address (it reaches this machine)', list: ranges([['0.0.0.0', 8, 'ipv4'], ['::', 128, 'ipv6']]) },
  { what: 'a link-local address (cloud metadata services live there)', list: ranges([['169.254.0.0', 16, 'ipv4'], ['fe80::', 10, 'ipv6']]) },
  // Alibaba's metadata service sits in the shared 100.64/10 range (Tailscale's too, which stays allowed); AWS's IPv6 one in fd00:ec2::/64.
  { what: 'a cloud metadata address', list: ranges([['100.100.100.200', 32, 'ipv4'], ['fd00:ec2::254', 128, 'ipv6']]) },
  { what: 'an IPv4-compatible IPv6 address', list: ranges([['::', 96, 'ipv6']]) },
  { what: 'a multicast or broadcast address', list: ranges([['224.0.0.0', 4, 'ipv4'], ['255.255.255.255', 32, 'ipv4'], ['ff00::', 8, 'ipv6']]) },
];

/** Why an IP address may not receive a console channel's notices, or null when it may. */
export function refusedAddress(address: string, rule: DestinationRule): string | null {
  const v = isIP(address);
  if (v === 0) return 'not an IP address';
  const family: Family = v === 4 ? 'ipv4' : 'ipv6';
  if (LOOPBACK.check(address, family)) return rule.allowLoopback ? null : 'a loopback address (this machine)';
  return REFUSED.find((r) => r.list.check(address, family))?.what ?? null;
}

/** Why a URL's host may not receive a console channel's notices, judged without DNS (IP literals and `localhost`); null when it may so far. */
export function refusedUrlHost(url: string, rule: DestinationRule): string | null {
  let host: string;
  try {
    host = new URL(url).hostname.replace(/^\[(.*)\]$/, '$1').replace(/\.$/, '').toLowerCase();
  } catch {
    return 'not a URL';
  }
  if (host === 'localhost' || host.endsWith('.localhost')) return rule.allowLoopback ? null : 'a loopback name (this machine)';
  return isIP(host) === 0 ? null : refusedAddress(host, rule);
}

export function destinationRefused(url: string, reason: string): AppError {
  let host = '';
  try {
    host = new URL(url).host;
  } catch {
    // The reason already says it is not a URL.
  }
  return new AppError(
    NotifyErrorCode.DESTINATION_REFUSED,
    `channel.url: ${host || 'the host'} is ${reason}: a channel made in the console may not send there (config.yaml's channels may; notifications.allowLoopback: true allows loopback)`,
    { details: { field: 'channel.url', host } },
  );
}

/** dns.lookup that fails when any address the name resolves to is refused, so a rebinding name cannot slip one past. */
export function guardedLookup(rule: DestinationRule, resolve: typeof dnsLookup = dnsLookup): LookupFunction {
  return (hostname, options, callback) => {
    const all: LookupAllOptions = { ...(options as LookupOptions), all: true };
    resolve(hostname, all, (err, addresses: LookupAddress[]) => {
      if (err) return callback(err, '', 0);
      const bad = addresses.map((a) => ({ a, why: refusedAddress(a.address, rule) })).find((x) => x.why !== null);
      if (bad) {
        const e = new AppError(NotifyErrorCode.DESTINATION_REFUSED, `${hostname} resolves to ${bad.why}`, { details: { host: hostname } });
        return callback(e as unknown as NodeJS.ErrnoException, '', 0);
      }
      if ((options as LookupOptions).all) return (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, addresses);
      const first = addresses[0];
      if (!first) return callback(Object.assign(new Error(`${hostname} has no address`), { code: 'ENOTFOUND' }), '', 0);
      callback(null, first.address, first.family);
    });
  };
}

export interface SendResult {
  status: number;
}

/** One HTTP attempt; rejects on network error, timeout or a refused destination. `rule` null: any address (config.yaml's channels). */
export type Sender = (req: OutboundRequest, timeoutMs: number, rule: DestinationRule | null) => Promise<SendResult>;

/**
 * The real sender over undici. Guarded sends go through an agent whose connector resolves names with
 * guardedLookup; IP literals never reach a lookup, so they are checked here first. Redirects are not
 * followed (undici's request follows none), so a receiver cannot bounce a notice to a refused address.
 */
export class UndiciSender {
  private readonly agents = new Map<boolean, Agent>();

  /** `resolve`: the name lookup guarded sends use (tests give one that answers what a rebinding DNS server would). */
  constructor(private readonly resolve: typeof dnsLookup = dnsLookup) {}

  readonly send: Sender = async (req, timeoutMs, rule) => {
    let dispatcher: Dispatcher | undefined;
    if (rule) {
      const why = refusedUrlHost(req.url, rule);
      if (why) throw destinationRefused(req.url, why);
      dispatcher = this.agentFor(rule);
    }
    const res = await request(req.url, {
      method: req.method,
      headers: req.headers,
      body: req.body,
      headersTimeout: timeoutMs,
      bodyTimeout: timeoutMs,
      signal: AbortSignal.timeout(timeoutMs),
      ...(dispatcher ? { dispatcher } : {}),
    });
    await res.body.dump();
    return { status: res.statusCode };
  };

  private agentFor(rule: DestinationRule): Agent {
    let agent = this.agents.get(rule.allowLoopback);
    if (!agent) {
      agent = new Agent({ connect: { lookup: guardedLookup(rule, this.resolve) } });
      this.agents.set(rule.allowLoopback, agent);
    }
    return agent;
  }

  /** Drops the guarded agents' sockets at once (a notice in flight fails; the dispatcher is going away). */
  async dispose(): Promise<void> {
    const agents = [...this.agents.values()];
    this.agents.clear();
    await Promise.all(agents.map((a) => a.destroy().catch(() => undefined)));
  }
}
