// What the request path's modules share: this node's name, lease and clock, the connection, the ids its
// running requests own (the lease keeper renews them) and what failed calls left to give back.

import type { PgConnection } from './pg-connection.js';
import type { LeaseKeeper } from './pg-leases.js';
import type { Recovery } from './pg-recovery.js';

export interface PgNode {
  conn: PgConnection;
  leases: LeaseKeeper;
  recovery: Recovery;
  /** Names this node in the slots and holds it owns. */
  node: string;
  leaseMs: number;
  /** Clock for months, rate windows and usage times, unix ms. Leases use the database's clock. */
  now: () => number;
  onError?: ((err: Error) => void) | undefined;
}
