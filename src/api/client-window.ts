// The sandbox's per-client rate limit: a fixed window of one wall-clock minute, requests counted per
// client address group (http/client-address.ts: an IPv4 address or an IPv6 /64). In memory, per
// process: O(1) a request, and the whole table is dropped when the minute turns, so it never holds
// more than one minute's clients, and at most `maxClients` of them (a flood of addresses is refused
// rather than let grow the table).

import type { RateDecision } from '../ledger/ledger.js';

const WINDOW_MS = 60_000;
/** Distinct clients one minute may count (a few MB at most). */
export const MAX_CLIENTS_PER_WINDOW = 100_000;

export class ClientWindow {
  private windowStart = -1;
  private counts = new Map<string, number>();

  constructor(
    private readonly perMinute: number,
    private readonly maxClients = MAX_CLIENTS_PER_WINDOW,
    private readonly now: () => number = Date.now,
  ) {}

  /** Count one request of `client`; `ok: false` when its minute is used up (or the table is full). */
  take(client: string): RateDecision {
    const now = this.now();
    const start = now - (now % WINDOW_MS);
    if (start !== this.windowStart) {
      this.windowStart = start;
      this.counts = new Map();
    }
    const reset = Math.ceil((start + WINDOW_MS) / 1000);
    const retryAfter = Math.max(1, Math.ceil((start + WINDOW_MS - now) / 1000));
    const used = this.counts.get(client);
    if (used === undefined && this.counts.size >= this.maxClients) {
      return { ok: false, retryAfter, limit: this.perMinute, remaining: 0, reset };
    }
    if ((used ?? 0) >= this.perMinute) return { ok: false, retryAfter, limit: this.perMinute, remaining: 0, reset };
    this.counts.set(client, (used ?? 0) + 1);
    return { ok: true, limit: this.perMinute, remaining: this.perMinute - (used ?? 0) - 1, reset };
  }
}
