// GET /healthz (the process is alive, and what its pool runs on) and GET /readyz (the pool ready, the
// ledger open, the server accepting). Not remove.bg's, but answers about the service all the same.

import type { RequestContext } from '../http/context.js';
import { modelLicense } from '../model/manifest.js';
import type { Ledger } from '../ledger/ledger.js';
import type { RemovalPool } from '../pool/pool-api.js';

/**
 * 200 while the process lives (a liveness probe must not restart a node for its database's outage);
 * `ledger: "down"` says the ledger cannot be reached, and /readyz answers 503 meanwhile.
 */
export function handleHealth(ctx: RequestContext, pool: RemovalPool, ledger: Ledger): void {
  const i = pool.info;
  const lic = i && !i.ownModelFile ? modelLicense(i.model) : undefined;
  ctx.sendJson(200, {
    status: 'ok',
    ledger: ledger.isOpen() ? 'up' : 'down',
    // Anyone may ask: the device's reason loses the folders it names (the start-up output keeps them).
    ...(i && { device: withoutPaths(i.device.label), device_reason: withoutPaths(i.device.reason), model: withoutPaths(i.model), workers: i.workers }),
    // Which file runs, by its family and hash (a model file of the user's own, or a bundled one).
    ...(i?.modelFamily !== undefined && { model_family: i.modelFamily }),
    ...(i?.modelSha256 !== undefined && { model_sha256: i.modelSha256 }),
    // Where the model's weights come from and under what terms, as the manifest records them.
    ...(lic && {
      model_license: {
        weights: lic.weights,
        weights_source: lic.weightsSource,
        weights_stated_in: lic.weightsStatedIn,
        package: lic.package,
        package_stated_in: lic.packageStatedIn,
        package_use: lic.packageUse,
      },
    }),
  });
}

export function handleReady(ctx: RequestContext, pool: RemovalPool, ledger: Ledger, accepting: boolean): void {
  const checks = { pool: pool.ready, ledger: ledger.isOpen(), accepting };
  const ready = checks.pool && checks.ledger && checks.accepting;
  ctx.sendJson(ready ? 200 : 503, { status: ready ? 'ready' : 'not_ready', checks });
}

/**
 * A filesystem path (`build/Release`, `/proc/driver/nvidia/gpus`, `./data/x`: anything with a slash
 * between names, not part of a URL) as `[path]`: an unauthenticated answer must not map the host's
 * folders. Names without a folder (`libonnxruntime.so.1`) stay.
 */
export function withoutPaths(text: string): string {
  return text.replace(/(?<![\w:/.~-])(?:~|\.{1,2})?\/?(?:[\w.@+~-]+\/)+[\w.@+~-]*/g, (m) => (m.includes('/') ? '[path]' : m));
}
