import { z } from 'zod';
import { TokenViewSchema } from './proxy.js';
import { EstimateSchema } from './telemetry.js';

// The Clients panel's channel: what each client of the proxy (a token, or
// anonymous loopback) asked for over a window, from the request log: requests,
// tokens in and out, the estimated cost by the same split as cost.summary's
// byClient, refusals and failures by their code, and when it was last seen.

/** `month`: this calendar month in UTC, the month a token's budget counts. */
export const ClientUsageWindowSchema = z.enum(['1h', '24h', '7d', '30d', 'month']);
export type ClientUsageWindow = z.infer<typeof ClientUsageWindowSchema>;

/** Requests of one client the proxy answered with one error code (the `error.code` the client saw). */
export const ClientErrorCountSchema = z
  .object({
    code: z.string(),
    /** The HTTP status answered with that code (the most frequent one when a code came with several). */
    status: z.number().int(),
    requests: z.number().int().positive(),
  })
  .strict();
export type ClientErrorCount = z.infer<typeof ClientErrorCountSchema>;

export const ClientUsageRowSchema = z
  .object({
    client: z.string(),
    /** `internal`: the console's own client (the playground, `console:playground`), or a name no token row has. */
    kind: z.enum(['token', 'anonymous', 'internal']),
    /** The token as listed (its class, limits, revocation); null for anonymous loopback and for a name no token row has now. */
    token: TokenViewSchema.nullable(),
    /** Rows of the window, answered or not. */
    requests: z.number().int().nonnegative(),
    /** Answered with status < 400. */
    answered: z.number().int().nonnegative(),
    /** Sums over the rows that reported usage; null when requests were made and none reported it (unknown, not 0). */
    tokensIn: z.number().int().nonnegative().nullable(),
    tokensOut: z.number().int().nonnegative().nullable(),
    /** Answered requests without a completion token count (left out of tokensOut). */
    requestsWithoutTokens: z.number().int().nonnegative(),
    /** GPU time shared among concurrent requests × the host's price (cost.summary's byClient); unavailable when a host has no price. */
    cost: EstimateSchema,
    gpuSeconds: z.number().nonnegative(),
    /** Errors by code, most frequent first: the proxy's refusals (rate limit, model not allowed, budget, queue full, …) and upstream failures. */
    errors: z.array(ClientErrorCountSchema),
    /** Newest request of the window; null with none. */
    lastSeenAt: z.number().nullable(),
  })
  .strict();
export type ClientUsageRow = z.infer<typeof ClientUsageRowSchema>;

export const ClientUsageSchema = z
  .object({
    at: z.number(),
    window: ClientUsageWindowSchema,
    fromMs: z.number(),
    toMs: z.number(),
    /** When the cost figures were computed (the long windows' cost is reused for a few minutes): the cost covers the window ending then. */
    costAt: z.number(),
    /** Every token (revoked ones only with requests in the window), and anonymous loopback when it is on or was used. */
    clients: z.array(ClientUsageRowSchema),
    /** Oldest row the request log still holds: a window reaching further back is cut by the retention, not by a lack of traffic. */
    oldestRowTs: z.number().nullable(),
  })
  .strict();
export type ClientUsage = z.infer<typeof ClientUsageSchema>;

export const proxyClientsInvokeChannels = {
  'proxy.clientUsage': {
    input: z.object({ window: ClientUsageWindowSchema.default('24h') }).strict(),
    output: ClientUsageSchema,
  },
} as const;
