// The process-wide cap on request-body bytes held in memory (`--body-memory-bytes`) and its shares,
// each checked here and nowhere else. A body takes its bytes before the first one is read (its
// Content-Length, or its largest allowed size without one) and gives them back when its request is
// answered or its client leaves: the body, and the image taken from it, live about that long.
//
// The shares, for a budget of B bytes and a body limit of M (`--max-body-bytes`):
// - bodies without a key (the sandbox) hold at most B/8 together, and the clients of one address
//   group (an IPv4 address, an IPv6 /64) at most half of that; a sandbox body is limited to that half;
// - the bodies of one key hold at most its concurrency cap × M, and never more than half of what the
//   sandbox leaves (but always at least M, so one largest body of any key fits an idle budget).
// So one address, or one key, holding all it may still leaves the rest of the budget to other keys.
// A body that holds bytes must also keep arriving at minUploadRate's pace.

import { addressGroup } from './client-address.js';

/** Whose body it is: a key's account (with its concurrency cap), or nobody's (the sandbox) from an address. */
export type BodyOwner = { readonly account: string; readonly concurrency: number } | { readonly address: string };

/** Why a body was refused: the whole budget, or the share its owner already holds. */
export interface BodyRefusal {
  readonly refused: 'budget' | 'sandbox' | 'address' | 'key';
  /** Bytes held in what refused it (the budget, or the share) and that one's size. */
  readonly heldBytes: number;
  readonly limitBytes: number;
}

/** A body's bytes in the budget; `release` gives them back (idempotent). */
export interface BodyHold {
  readonly bytes: number;
  release(): void;
}

/** The sandbox's part of the budget: one eighth. */
const SANDBOX_DIVISOR = 8;

/** The minimum upload rate's floor, bytes a second: uWS's own (160 kB per 10 s), which it enforces by closing without an answer. */
export const UPLOAD_MIN_BYTES_PER_S = 16 * 1024;

/**
 * The longest a body may hold its bytes at the slowest rate allowed: a body must arrive at least this
 * fast in proportion to what it holds (a 30 MB body at 256 kB/s, 2 Mbit/s), so memory held for an
 * upload is held for at most about this long, whoever sends it. It is the default request deadline
 * (`--request-timeout`): a body slower than this would get its 408 then anyway, so the rule costs an
 * honest client nothing on the defaults and frees a trickle's bytes after one upload window.
 */
export const UPLOAD_MAX_HOLD_S = 120;

/** The rate, bytes a second, a body holding `heldBytes` must keep: UPLOAD_MIN_BYTES_PER_S, or heldBytes over UPLOAD_MAX_HOLD_S when more. */
export function minUploadRate(heldBytes: number): number {
  return Math.max(UPLOAD_MIN_BYTES_PER_S, Math.ceil(heldBytes / UPLOAD_MAX_HOLD_S));
}

const isKeyed = (owner: BodyOwner): owner is Extract<BodyOwner, { account: string }> => 'account' in owner;

export class BodyBudget {
  /** What bodies without a key may hold together. */
  readonly sandboxBytes: number;
  /** What the sandbox bodies of one address group may hold together (and the largest sandbox body). */
  readonly addressBytes: number;
  private used = 0;
  private sandboxUsed = 0;
  /** Bytes held per key and per sandbox address group; an entry goes when it comes back to 0. */
  private readonly owners = new Map<string, number>();

  /**
   * @param limitBytes the whole budget (`--body-memory-bytes`)
   * @param maxBodyBytes the largest body (`--max-body-bytes`), which sizes a key's share
   */
  constructor(
    readonly limitBytes: number,
    readonly maxBodyBytes: number = limitBytes,
  ) {
    this.sandboxBytes = Math.floor(limitBytes / SANDBOX_DIVISOR);
    this.addressBytes = Math.floor(this.sandboxBytes / 2);
  }

  /** Bytes held by requests now (bodies and downloads). */
  get inUse(): number {
    return this.used;
  }

  /** Bytes held by bodies without a key now. */
  get sandboxInUse(): number {
    return this.sandboxUsed;
  }

  /** Bytes held now by `owner`'s bodies (a key's, or the sandbox bodies of an address's group). */
  heldBy(owner: BodyOwner): number {
    return this.owners.get(ownerId(owner)) ?? 0;
  }

  /** How much `owner`'s bodies may hold together. */
  shareOf(owner: BodyOwner): number {
    if (!isKeyed(owner)) return this.addressBytes;
    const keyed = Math.floor((this.limitBytes - this.sandboxBytes) / 2);
    return Math.min(Math.max(1, owner.concurrency) * this.maxBodyBytes, Math.max(this.maxBodyBytes, keyed));
  }

  /** The largest body `owner` may send: the body limit, or for the sandbox its address share when smaller. */
  largestBody(owner: BodyOwner | undefined): number {
    return owner && !isKeyed(owner) ? Math.min(this.maxBodyBytes, this.addressBytes) : this.maxBodyBytes;
  }

  /**
   * Take `bytes` for a body of `owner` (none: counted against the whole budget only). Refused, with
   * nothing taken, when that would pass the budget (checked first: a full budget is the service's
   * state, not the client's), the sandbox's share or the owner's.
   */
  take(bytes: number, owner?: BodyOwner): BodyHold | BodyRefusal {
    if (this.used + bytes > this.limitBytes) return { refused: 'budget', heldBytes: this.used, limitBytes: this.limitBytes };
    const id = owner && ownerId(owner);
    const sandbox = owner !== undefined && !isKeyed(owner);
    if (sandbox && this.sandboxUsed + bytes > this.sandboxBytes) return { refused: 'sandbox', heldBytes: this.sandboxUsed, limitBytes: this.sandboxBytes };
    if (owner && id) {
      const held = this.owners.get(id) ?? 0;
      const share = this.shareOf(owner);
      if (held + bytes > share) return { refused: sandbox ? 'address' : 'key', heldBytes: held, limitBytes: share };
      this.owners.set(id, held + bytes);
    }
    this.used += bytes;
    if (sandbox) this.sandboxUsed += bytes;
    let given = false;
    return {
      bytes,
      release: () => {
        if (given) return;
        given = true;
        this.used -= bytes;
        if (sandbox) this.sandboxUsed -= bytes;
        if (id) {
          const left = (this.owners.get(id) ?? 0) - bytes;
          if (left > 0) this.owners.set(id, left);
          else this.owners.delete(id);
        }
      },
    };
  }

  /**
   * Count `bytes` more of a request's downloaded images, against the whole budget only (a download is
   * bounded by the fetch timeout, and a keyed one by the key's concurrency slot); false, and nothing
   * counted, when that would pass it.
   */
  add(bytes: number): boolean {
    if (this.used + bytes > this.limitBytes) return false;
    this.used += bytes;
    return true;
  }

  /** Give back `bytes` counted by add. */
  remove(bytes: number): void {
    this.used -= bytes;
  }
}

export function isRefusal(x: BodyHold | BodyRefusal): x is BodyRefusal {
  return 'refused' in x;
}

function ownerId(owner: BodyOwner): string {
  return isKeyed(owner) ? `account ${owner.account}` : `address ${addressGroup(owner.address)}`;
}
