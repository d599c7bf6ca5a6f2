// X-Api-Key (or an OAuth2-style bearer token, as the OAS allows) → account, or 403.

import type { AccountView, Ledger, RateState } from '../ledger/ledger.js';
import { authFailed, missingApiKey } from './errors.js';

export interface HeaderSource {
  header(name: string): string | undefined;
}

export async function authenticate(req: HeaderSource, ledger: Ledger): Promise<AccountView> {
  let key = req.header('x-api-key');
  if (key === undefined) {
    const auth = req.header('authorization');
    if (auth && /^bearer\s+/i.test(auth)) key = auth.replace(/^bearer\s+/i, '');
  }
  key = key?.trim();
  if (!key) throw missingApiKey();
  const account = await ledger.authenticate(key);
  if (!account) throw authFailed();
  return account;
}

export function rateHeaders(state: RateState): Record<string, string> {
  return {
    'X-RateLimit-Limit': String(state.limit),
    'X-RateLimit-Remaining': String(Math.max(0, Math.floor(state.remaining))),
    'X-RateLimit-Reset': String(Math.ceil(state.reset)),
  };
}
