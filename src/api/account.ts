// GET /v1.0/account: balances in remove.bg's exact shape (integers here; see REMOVEBG-API.md intro).

import type { Ledger } from '../ledger/ledger.js';
import type { RequestContext } from '../http/context.js';
import { authenticate, rateHeaders } from './auth.js';

export async function handleAccount(ctx: RequestContext, ledger: Ledger): Promise<void> {
  const account = await authenticate(ctx, ledger);
  const [b, rate] = await Promise.all([ledger.balances(account.id), ledger.peekRate(account)]);
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
    rateHeaders(rate),
  );
}
