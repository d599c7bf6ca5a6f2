// GET /v1.0/account: balances in remove.bg's exact shape (integers here; see REMOVEBG-API.md intro).

import type { Ledger } from '../ledger/ledger.js';
import type { RequestContext } from '../http/context.js';
import { authenticate, rateHeaders } from './auth.js';

export function handleAccount(ctx: RequestContext, ledger: Ledger): void {
  const account = authenticate(ctx, ledger);
  const b = ledger.balances(account.id);
  ctx.sendJson(
    200,
    {
      data: {
        attributes: {
          credits: { total: b.total, subscription: b.subscription, payg: b.payg, enterprise: b.enterprise },
          api: { free_calls: b.freeCalls, sizes: 'all' },
        },
      },
    },
    rateHeaders(ledger.peekRate(account)),
  );
}
