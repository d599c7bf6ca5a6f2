// What failed calls left to give back, and the pass that gives it back once the database answers again.
// It runs every second, and at once when a call finds the database back after an outage.

import type { ReconcileReport } from '../ledger.js';
import type { AvailabilityWatcher, PgConnection } from './pg-connection.js';
import type { LeaseKeeper } from './pg-leases.js';
import { sweepOwnRows } from './pg-reconcile.js';

/** While the database is down or something is left to give back, the retry runs this often. */
const RECOVERY_PERIOD_MS = 1000;

export interface RecoveryOptions {
  /** This node's name in the slots and holds it owns. */
  node: string;
  leaseMs: number;
  now: () => number;
  onReconcile?: ((report: ReconcileReport) => void) | undefined;
}

export class Recovery implements AvailabilityWatcher {
  /**
   * What failed calls left to give back, id → when it was added: slots to delete and holds to refund
   * whose release or refund failed, or whose acquire or reserve may have landed without its answer. The
   * recovery retries them every second (both are idempotent) for a lease after the database answers
   * again, since a statement stalled in a stopped database may still commit when it resumes.
   */
  readonly slots = new Map<string, number>();
  readonly holds = new Map<string, number>();
  /** Reservations whose settle was sent but not answered: voided (refunded, or a late settle undone). */
  readonly voids = new Map<string, number>();
  /**
   * Set by any call that found the database unavailable; cleared by a sweep of this node's own rows once
   * it answers again. A crashed database comes back without its last unflushed commits (periodic
   * durability): a slot release or a refund it had acknowledged may be undone, leaving a row this node
   * no longer tracks nor renews, which would hold the account's slot or credits for a whole lease.
   */
  private sweepOwn = false;
  private recovering: Promise<void> | null = null;
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly conn: PgConnection,
    private readonly leases: LeaseKeeper,
    private readonly opts: RecoveryOptions,
  ) {
    this.timer = setInterval(() => void this.recover(), RECOVERY_PERIOD_MS);
    this.timer.unref();
  }

  /** The pass in progress, if any: after an outage, acquireSlot waits for it. */
  get pass(): Promise<void> | null {
    return this.recovering;
  }

  down(): void {
    this.sweepOwn = true;
  }

  back(): void {
    void this.recover();
  }

  /**
   * Give back what failed calls left, or probe a database marked down. `recovering` is set after the
   * pass has started and cleared when it ends: a pass with nothing to await finishes inside its own
   * start, and clearing it there (before the assignment) would leave the very first, idle pass in place
   * for ever, so nothing would be given back until the lease lapsed.
   */
  recover(): Promise<void> {
    if (this.recovering) return this.recovering;
    const pass = this.recoverOnce().finally(() => {
      if (this.recovering === pass) this.recovering = null;
    });
    this.recovering = pass;
    return pass;
  }

  /** Stops the period; resolves once a pass in progress has ended. */
  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.recovering;
  }

  private async recoverOnce(): Promise<void> {
    try {
      if (!this.conn.available) await this.conn.run('probe', []);
      // Back: renew now rather than at the keeper's next period, so /readyz and /healthz say so at once.
      if (!this.leases.healthy) await this.leases.tick();
      if (this.sweepOwn) await this.sweep();
      const doneBefore = Date.now() - this.opts.leaseMs;
      for (const [id, added] of [...this.slots]) {
        await this.conn.run('releaseSlot', [id]);
        if (added < doneBefore) this.slots.delete(id);
      }
      for (const [id, added] of [...this.holds]) {
        await this.conn.run('refund', [id]);
        if (added < doneBefore) this.holds.delete(id);
      }
      for (const [id, added] of [...this.voids]) {
        await this.conn.run('voidReservation', [id]);
        if (added < doneBefore) this.voids.delete(id);
      }
    } catch {
      // still down: the next period tries again
    }
  }

  private async sweep(): Promise<void> {
    this.sweepOwn = false;
    try {
      const report = await sweepOwnRows(this.conn, this.opts.node, this.opts.now(), [...this.leases.slots], [...this.leases.holds]);
      if (report.holds > 0 || report.slots > 0) this.opts.onReconcile?.(report);
    } catch (err) {
      this.sweepOwn = true;
      throw err;
    }
  }
}
