// POST /sandbox/v1.0/removebg: the remove.bg API without a key, for trying the service. The keyed
// path (removebg.ts: runRemoval) with other terms: no account and no credits (X-Credits-Charged: 0,
// the ledger is never touched), every result at `preview` (the smallest tier, so any larger size
// asked for is capped to it), a per-client window of requests per minute, and a small share of the
// pool: sandbox tasks wait behind every keyed one and hold at most `share` places, running or
// waiting. Over a limit: remove.bg's 429 with Retry-After.

import type { RequestContext } from '../http/context.js';
import type { RateDecision } from '../ledger/ledger.js';
import { addressGroup } from '../http/client-address.js';
import { HttpError } from '../http/http-error.js';
import { backlogSeconds } from '../pool/pool-api.js';
import { rateHeaders } from './auth.js';
import { rateLimitExceeded, withHeaders } from './errors.js';
import { runRemoval, type Charge, type RemoveBgDeps, type RemovalTerms } from './removebg.js';

export const SANDBOX_PATH = '/sandbox/v1.0/removebg';

export interface SandboxLimits {
  ratePerMinute: number;
}

/**
 * Counts the sandbox's requests per client (api/client-window.ts in one process; the supervisor's
 * window for the processes of `--processes N`, api/group-window.ts).
 */
export interface RateWindow {
  take(client: string): RateDecision | Promise<RateDecision>;
}
// The share itself is the pool's bound on low-priority work (PoolOptions.lowPriorityPlaces, from
// --sandbox-share): it counts places exactly, running tasks included, until each really ends.

/** Nothing is held, nothing is charged. */
const FREE: Charge = Object.freeze({ size: 'preview', credits: 0, settle: async () => {}, refund: async () => {} });

/** The sandbox's handler, counting each client's requests in `window`. */
export function sandboxHandler(deps: RemoveBgDeps, limits: SandboxLimits, window: RateWindow): (ctx: RequestContext) => Promise<void> {
  return async (ctx) => {
    // No key: the body counts against the sandbox's share of the bodies-in-memory budget and its
    // address's part of that (http/body-budget.ts), which also bounds a sandbox body's size.
    const owner = { address: ctx.clientAddress };
    ctx.checkBodyLength(owner); // 413 before the client's minute is counted
    const rate = await window.take(addressGroup(ctx.clientAddress));
    if (!rate.ok) {
      ctx.notes.rejection = 'sandbox_rate';
      throw withHeaders(
        rateLimitExceeded(rate.retryAfter, `The sandbox takes ${limits.ratePerMinute} requests a minute from each client; use an API key for more.`),
        rateHeaders(rate),
      );
    }
    const terms: RemovalTerms = {
      priority: 'low',
      bodyOwner: owner,
      reserve: async () => FREE,
      rateAfter: () => rate,
      shareFull() {
        ctx.notes.rejection = 'sandbox_share';
        return withHeaders(
          rateLimitExceeded(backlogSeconds(deps.pool.stats()), 'The sandbox is at its share of the service; please retry later, or use an API key.'),
          rateHeaders(rate),
        );
      },
    };
    try {
      await runRemoval(ctx, deps, terms);
    } catch (err) {
      // A body over the sandbox's share of memory is refused by http/, which knows no window: every
      // sandbox 429 reports the client's.
      if (err instanceof HttpError && err.status === 429 && err.headers['X-RateLimit-Limit'] === undefined) {
        throw new HttpError(err.status, err.code, err.title, err.detail, { ...rateHeaders(rate), ...err.headers });
      }
      throw err;
    }
  };
}
