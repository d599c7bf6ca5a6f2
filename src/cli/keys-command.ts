// `cutout keys create|list|revoke|credit`: API key admin on the ledger: the data folder's LMDB, or the
// PostgreSQL database given by --ledger / CUTOUT_LEDGER_URL. Safe while servers use the same ledger;
// keys are printed once, at creation, and never again.

import { checkFlags, parseArgs, type ParsedArgs } from './args.js';
import { openAdminLedger, LedgerCliError, type CommandIo } from './ledger-cli.js';
import { BalanceLimitError, LedgerInputError, type AccountSummary, type BalanceName, type LedgerBackend } from '../ledger/ledger.js';
import { parseDurability, type Durability } from '../domain/durability.js';

export type { CommandIo } from './ledger-cli.js';

const HELP = `Usage:
  cutout keys create [--credits N] [--payg N] [--enterprise N] [--free-calls N] [--concurrency N] [--rate N] [--label TEXT] [--json]
      Create an account with one key. Prints the key alone (or JSON with --json); it is not shown again.
  cutout keys list [--json]
      Accounts with ids, labels, balances and revoked state (never keys).
  cutout keys revoke <key|account-id>
      Revoke one key, or every key of an account. Effective on the next request in every process.
  cutout keys credit <key|account-id> --add N [--payg | --enterprise]
      Add N credits to the subscription balance (or payg / enterprise).
Options: --data DIR (ledger folder; default $CUTOUT_DATA_DIR or ./data)
         --ledger URL (a postgres:// ledger instead; default $CUTOUT_LEDGER_URL)
         --durability periodic|fsync (how commits reach the disk; default $CUTOUT_DURABILITY or periodic)
Exit codes: 0 done, 1 no such key, account or ledger, 2 usage error, 3 refused (a balance would pass
2^53-1 credits; nothing changed).`;

class UsageError extends Error {}

/** The flags of each subcommand, besides the ledger's (--data, --ledger, --durability) and --json. */
const SUBCOMMAND_FLAGS: Record<string, readonly string[]> = {
  create: ['credits', 'payg', 'enterprise', 'free-calls', 'concurrency', 'rate', 'label'],
  list: [],
  revoke: [],
  credit: ['add', 'payg', 'enterprise'],
};
const COMMON_FLAGS = ['json', 'help', 'data', 'ledger', 'durability'];

function intFlag(args: ParsedArgs, name: string): number | undefined {
  const v = args.flags.get(name);
  if (v === undefined) return undefined;
  // Past 2^53-1 a number is rounded (9007199254740993 reads as …992): refuse it as written.
  if (v === true || !/^\d+$/.test(v) || !Number.isSafeInteger(Number(v))) {
    throw new UsageError(`Expected a non-negative integer up to ${Number.MAX_SAFE_INTEGER} for --${name} but received ${String(v)}`);
  }
  return Number(v);
}

function formatTable(rows: string[][]): string {
  const widths = rows[0]!.map((_, c) => Math.max(...rows.map((r) => r[c]!.length)));
  return (
    rows
      .map((r) =>
        r
          .map((cell, c) => cell.padEnd(widths[c]!))
          .join('  ')
          .trimEnd(),
      )
      .join('\n') + '\n'
  );
}

function listText(accounts: AccountSummary[]): string {
  const rows = [['ID', 'LABEL', 'SUBSCRIPTION', 'PAYG', 'ENTERPRISE', 'FREE_CALLS', 'CONCURRENCY', 'RATE/MIN', 'REVOKED']];
  for (const a of accounts) {
    const b = a.balances;
    rows.push([
      a.id,
      a.label,
      String(b.subscription),
      String(b.payg),
      String(b.enterprise),
      String(b.freeCalls),
      String(a.concurrency),
      String(a.ratePerMinute),
      a.revoked ? 'yes' : 'no',
    ]);
  }
  return formatTable(rows);
}

async function run(sub: string, args: ParsedArgs, ledger: LedgerBackend, io: CommandIo): Promise<number> {
  const json = args.flags.get('json') === true;
  switch (sub) {
    case 'create': {
      const label = args.flags.get('label');
      const { account, apiKey } = await ledger.createAccount({
        label: typeof label === 'string' ? label : '',
        subscription: intFlag(args, 'credits'),
        payg: intFlag(args, 'payg'),
        enterprise: intFlag(args, 'enterprise'),
        freeCallsPerMonth: intFlag(args, 'free-calls'),
        concurrency: intFlag(args, 'concurrency'),
        ratePerMinute: intFlag(args, 'rate'),
      });
      io.stdout(json ? JSON.stringify({ key: apiKey, account, balances: await ledger.balances(account.id) }) + '\n' : apiKey + '\n');
      return 0;
    }
    case 'list': {
      const accounts = await ledger.listAccounts();
      io.stdout(json ? JSON.stringify(accounts) + '\n' : listText(accounts));
      return 0;
    }
    case 'revoke': {
      const target = args.positionals[1];
      if (!target) throw new UsageError('Expected a key or account id for revoke');
      const accountId = await ledger.resolveAccount(target);
      if (!accountId) {
        io.stderr(`cutout keys: no such key or account\n`);
        return 1;
      }
      const changed = await ledger.revoke(target);
      io.stdout(json ? JSON.stringify({ accountId, revoked: changed }) + '\n' : `revoked ${changed} key(s) of ${accountId}\n`);
      return 0;
    }
    case 'credit': {
      const target = args.positionals[1];
      if (!target) throw new UsageError('Expected a key or account id for credit');
      const amount = intFlag(args, 'add');
      if (amount === undefined || amount <= 0) throw new UsageError('Expected --add N with N > 0 for credit');
      const to: BalanceName = args.flags.get('payg') === true ? 'payg' : args.flags.get('enterprise') === true ? 'enterprise' : 'subscription';
      const accountId = await ledger.resolveAccount(target);
      const balances = accountId ? await ledger.addCredits(accountId, amount, to) : null;
      if (!accountId || !balances) {
        io.stderr(`cutout keys: no such key or account\n`);
        return 1;
      }
      io.stdout(
        json
          ? JSON.stringify({ accountId, balances }) + '\n'
          : `${accountId}: +${amount} ${to}; ${balances.subscription} subscription, ${balances.payg} payg, ${balances.enterprise} enterprise (total ${balances.total})\n`,
      );
      return 0;
    }
    default:
      throw new UsageError(`unknown keys command '${sub}'`);
  }
}

function durabilityOf(args: ParsedArgs): Durability | undefined {
  const flag = args.flags.get('durability');
  if (flag === true) throw new UsageError('Option --durability needs a value (periodic or fsync)');
  try {
    return parseDurability(flag ?? process.env.CUTOUT_DURABILITY);
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
}

/** `argv` is what follows `keys`. Returns the exit code: 0 ok, 1 not found, 2 usage error, 3 refused. */
export async function runKeysCommand(argv: string[], io: CommandIo): Promise<number> {
  const args = parseArgs(argv, new Set(['json', 'payg', 'enterprise', 'help']));
  const sub = args.positionals[0];
  // Help asked for (`keys --help`, `keys help`) is an answer: stdout, exit 0. No subcommand at all is a usage error.
  if (sub === 'help' || args.flags.has('help')) {
    io.stdout(HELP + '\n');
    return 0;
  }
  if (!sub) {
    io.stderr(HELP + '\n');
    return 2;
  }
  // `--payg N` is a number for create but a switch for credit.
  const parsed = sub === 'create' ? parseArgs(argv, new Set(['json', 'help'])) : args;
  let durability: Durability | undefined;
  try {
    const flagProblem = SUBCOMMAND_FLAGS[sub] ? checkFlags(parsed, [...SUBCOMMAND_FLAGS[sub], ...COMMON_FLAGS]) : null;
    if (flagProblem) throw new UsageError(flagProblem);
    durability = durabilityOf(parsed);
  } catch (err) {
    io.stderr(`cutout keys: ${(err as Error).message}\n${HELP}\n`);
    return 2;
  }
  let ledger: LedgerBackend;
  try {
    ledger = await openAdminLedger(parsed, io, { durability, create: sub === 'create' });
  } catch (err) {
    if (!(err instanceof LedgerCliError)) throw err;
    io.stderr(`cutout keys: ${err.message}\n${err.exitCode === 2 ? HELP + '\n' : ''}`);
    return err.exitCode;
  }
  try {
    return await run(sub, parsed, ledger, io);
  } catch (err) {
    if (err instanceof BalanceLimitError) {
      io.stderr(`cutout keys: refused: ${err.message}\n`);
      return 3;
    }
    if (err instanceof UsageError || err instanceof LedgerInputError) {
      io.stderr(`cutout keys: ${err.message}\n${HELP}\n`);
      return 2;
    }
    throw err;
  } finally {
    await ledger.close();
  }
}
