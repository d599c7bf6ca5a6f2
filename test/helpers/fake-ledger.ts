// An in-memory Ledger for protocol tests: keys, integer credits, free calls, slots, a fixed-window
// rate limit, and counters that let tests assert every reserve ends in exactly one settle/refund.

import { randomUUID } from 'node:crypto';
import {
  InsufficientCreditsError,
  type AccountView,
  type Balances,
  type Ledger,
  type RateDecision,
  type RateState,
  type Reservation,
  type Slot,
  type StorageDecision,
  type StorageUse,
  type UsageRecord,
} from '../../src/ledger/ledger.js';
import type { RequestedSize } from '../../src/domain/removal.js';

interface FakeAccount {
  view: AccountView;
  credits: number;
  freeCalls: number;
  slotsInUse: number;
  rateUsed: number;
  storage: StorageUse;
}

export interface FakeAccountOptions {
  credits?: number;
  freeCalls?: number;
  concurrency?: number;
  ratePerMinute?: number;
}

export class FakeLedger implements Ledger {
  private readonly byKey = new Map<string, FakeAccount>();
  private readonly byId = new Map<string, FakeAccount>();
  private readonly open = new Map<string, { reservation: Reservation; done: 'settled' | 'refunded' | null }>();
  opened = true;
  readonly usage: UsageRecord[] = [];
  counts = { reserve: 0, settle: 0, refund: 0 };
  /** Fixed "now" for X-RateLimit-Reset. */
  windowReset = Math.floor(Date.now() / 1000) + 60;

  addAccount(key: string, opts: FakeAccountOptions = {}): AccountView {
    const view: AccountView = {
      id: `acct_${this.byId.size + 1}`,
      label: key,
      concurrency: opts.concurrency ?? 4,
      ratePerMinute: opts.ratePerMinute ?? 500,
    };
    const acct: FakeAccount = {
      view,
      credits: opts.credits ?? 100,
      freeCalls: opts.freeCalls ?? 0,
      slotsInUse: 0,
      rateUsed: 0,
      storage: { bytes: 0, files: 0 },
    };
    this.byKey.set(key, acct);
    this.byId.set(view.id, acct);
    return view;
  }

  private get(id: string): FakeAccount {
    const a = this.byId.get(id);
    if (!a) throw new Error(`unknown account ${id}`);
    return a;
  }

  /** Synchronous balance read for assertions. */
  balancesNow(accountId: string): Balances {
    const a = this.get(accountId);
    return { subscription: a.credits, payg: 0, enterprise: 0, total: a.credits, freeCalls: a.freeCalls };
  }

  /** Synchronous key lookup for assertions. */
  accountOf(apiKey: string): AccountView | null {
    return this.byKey.get(apiKey)?.view ?? null;
  }

  slotsInUse(id: string): number {
    return this.get(id).slotsInUse;
  }

  /** Reservations neither settled nor refunded. */
  outstanding(): number {
    return [...this.open.values()].filter((r) => r.done === null).length;
  }

  async authenticate(apiKey: string): Promise<AccountView | null> {
    return this.accountOf(apiKey);
  }

  async balances(accountId: string): Promise<Balances> {
    return this.balancesNow(accountId);
  }

  async acquireSlot(account: AccountView): Promise<Slot | null> {
    const a = this.get(account.id);
    if (a.slotsInUse >= account.concurrency) return null;
    a.slotsInUse++;
    let released = false;
    return {
      release: async () => {
        if (released) return;
        released = true;
        a.slotsInUse--;
      },
    };
  }

  private state(a: FakeAccount): RateState {
    return { limit: a.view.ratePerMinute, remaining: Math.max(0, a.view.ratePerMinute - a.rateUsed), reset: this.windowReset };
  }

  async takeRate(account: AccountView, units: number): Promise<RateDecision> {
    const a = this.get(account.id);
    if (a.rateUsed + units > account.ratePerMinute) return { ok: false, retryAfter: 42, ...this.state(a) };
    a.rateUsed += units;
    return { ok: true, ...this.state(a) };
  }

  async peekRate(account: AccountView): Promise<RateState> {
    return this.state(this.get(account.id));
  }

  async reserve(account: AccountView, size: RequestedSize): Promise<Reservation> {
    this.counts.reserve++;
    const a = this.get(account.id);
    let tier = size === 'auto' ? (a.credits >= 1 ? 'full' : 'preview') : size;
    let credits = 1;
    let freeCall = false;
    if (tier === 'preview' && a.freeCalls > 0) {
      credits = 0;
      freeCall = true;
      a.freeCalls--;
    } else if (a.credits >= 1) {
      a.credits -= 1;
    } else {
      throw new InsufficientCreditsError('Insufficient credits');
    }
    if (size === 'auto' && tier === 'preview') tier = 'preview';
    const reservation: Reservation = { id: randomUUID(), accountId: account.id, size: tier, credits, freeCall };
    this.open.set(reservation.id, { reservation, done: null });
    return reservation;
  }

  async settle(reservation: Reservation, usage: UsageRecord): Promise<void> {
    const r = this.open.get(reservation.id);
    if (!r || r.done) return;
    this.counts.settle++;
    r.done = 'settled';
    this.usage.push(usage);
  }

  async refund(reservation: Reservation): Promise<void> {
    const r = this.open.get(reservation.id);
    if (!r || r.done) return;
    this.counts.refund++;
    r.done = 'refunded';
    const a = this.get(reservation.accountId);
    if (reservation.freeCall) a.freeCalls++;
    else a.credits += reservation.credits;
  }

  async reserveStorage(account: AccountView, bytes: number, quotaBytes: number): Promise<StorageDecision> {
    const s = this.get(account.id).storage;
    if (s.bytes + bytes > quotaBytes) return { ok: false, usedBytes: s.bytes };
    s.bytes += bytes;
    s.files++;
    let released = false;
    return {
      ok: true,
      release: async () => {
        if (released) return;
        released = true;
        s.bytes -= bytes;
        s.files--;
      },
    };
  }

  async storageUsed(accountId: string): Promise<StorageUse> {
    return this.storageNow(accountId);
  }

  /** Synchronous storage read for assertions. */
  storageNow(accountId: string): StorageUse {
    return { ...this.get(accountId).storage };
  }

  isOpen(): boolean {
    return this.opened;
  }

  async close(): Promise<void> {
    this.opened = false;
  }
}
