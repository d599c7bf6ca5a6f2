// This node's leases: the ids of the holds and slots its running requests own. A timer renews exactly
// these every third of the lease and then sweeps lapsed leases of any node (cutout.reap). What is not
// in these sets is never renewed: a hold whose refund failed, or a row whose insert answer was lost,
// lapses and comes back through the sweep instead of being held for ever by a live node.

import type { ReconcileReport } from '../ledger.js';

export interface LeaseStore {
  renew(holds: string[], slots: string[]): Promise<void>;
  reap(): Promise<ReconcileReport>;
}

export interface LeaseKeeperOptions {
  leaseMs: number;
  onReconcile?: ((report: ReconcileReport) => void) | undefined;
  onError?: ((err: Error) => void) | undefined;
}

export class LeaseKeeper {
  readonly holds = new Set<string>();
  readonly slots = new Set<string>();
  /** False after a renewal failed, until one succeeds (GET /readyz reports it). */
  healthy = true;
  private readonly timer: NodeJS.Timeout;
  private running: Promise<void> | null = null;

  constructor(
    private readonly store: LeaseStore,
    private readonly opts: LeaseKeeperOptions,
  ) {
    this.timer = setInterval(() => void this.tick(), Math.max(100, Math.floor(opts.leaseMs / 3)));
    this.timer.unref();
  }

  /** One renewal and sweep; overlapping calls share the one in progress. */
  tick(): Promise<void> {
    this.running ??= (async () => {
      try {
        if (this.holds.size > 0 || this.slots.size > 0) await this.store.renew([...this.holds], [...this.slots]);
        const report = await this.store.reap();
        this.healthy = true;
        if (report.holds > 0 || report.slots > 0) this.opts.onReconcile?.(report);
      } catch (err) {
        this.healthy = false;
        this.opts.onError?.(err as Error);
      } finally {
        this.running = null;
      }
    })();
    return this.running;
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.running;
  }
}
