// What `keys` and `usage` share: their I/O and how they find the ledger (the data folder's LMDB, or
// --ledger / CUTOUT_LEDGER_URL for PostgreSQL), with errors that say which and why.

import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { ParsedArgs } from './args.js';
import type { LedgerBackend } from '../ledger/ledger.js';
import type { Durability } from '../domain/durability.js';
import { parseLedgerUrl } from '../domain/ledger-url.js';
import { openLedger } from '../ledger/open-ledger.js';

export interface CommandIo {
  stdout: (s: string) => void;
  stderr: (s: string) => void;
  dataDir: string;
  /** CUTOUT_LEDGER_URL as the CLI found it; `--ledger` wins. */
  ledgerUrl?: string | undefined;
}

/** A ledger the command cannot open: exit 1 (not there, unreachable) or 2 (a bad option). */
export class LedgerCliError extends Error {
  constructor(
    message: string,
    readonly exitCode: 1 | 2,
  ) {
    super(message);
  }
}

export async function openAdminLedger(args: ParsedArgs, io: CommandIo, opts: { durability?: Durability | undefined; create: boolean }): Promise<LedgerBackend> {
  const flag = args.flags.get('ledger');
  if (flag === true) throw new LedgerCliError('Option --ledger needs a postgres:// URL', 2);
  let url: string | undefined;
  try {
    url = parseLedgerUrl(flag ?? io.ledgerUrl);
  } catch (err) {
    throw new LedgerCliError((err as Error).message, 2);
  }
  // LMDB: reading commands never create a folder; PostgreSQL: opening applies the migrations.
  if (!url && !opts.create && !existsSync(join(io.dataDir, 'data.mdb'))) throw new LedgerCliError(`no ledger in ${io.dataDir}`, 1);
  try {
    return await openLedger({ url, dataDir: io.dataDir, durability: opts.durability });
  } catch (err) {
    if ((err as { code?: string }).code === 'ledger_unavailable') throw new LedgerCliError((err as Error).message, 1);
    throw err;
  }
}
