// `cutout usage`: per-account summary of the usage log (requests, credits, free calls, output MP, statuses).

import { checkFlags, parseArgs } from './args.js';
import { openAdminLedger, LedgerCliError, type CommandIo } from './ledger-cli.js';
import type { LedgerBackend } from '../ledger/ledger.js';

const HELP = `Usage:
  cutout usage [--since DATE|DAYS] [--json]
      Summarise settled requests per account. --since takes an ISO date (2025-07-01) or a number of
      days back (7); default: everything logged.
Options: --data DIR (ledger folder; default $CUTOUT_DATA_DIR or ./data)
         --ledger URL (a postgres:// ledger instead; default $CUTOUT_LEDGER_URL)`;

/** Unix ms for `--since`, or null when it is neither a day count nor a date. */
export function parseSince(value: string, nowMs: number): number | null {
  if (/^\d+$/.test(value)) return nowMs - Number(value) * 86_400_000;
  const ms = Date.parse(value);
  return Number.isNaN(ms) ? null : ms;
}

/** `argv` is what follows `usage`. Returns the exit code. */
export async function runUsageCommand(argv: string[], io: CommandIo): Promise<number> {
  const args = parseArgs(argv, new Set(['json', 'help']));
  if (args.flags.has('help')) {
    io.stdout(HELP + '\n');
    return 0;
  }
  const flagProblem = checkFlags(args, ['since', 'json', 'help', 'ledger', 'data']);
  if (flagProblem) {
    io.stderr(`cutout usage: ${flagProblem}\n${HELP}\n`);
    return 2;
  }
  const sinceFlag = args.flags.get('since');
  const since = sinceFlag === undefined ? 0 : sinceFlag === true ? null : parseSince(sinceFlag, Date.now());
  if (since === null || args.positionals.length > 0) {
    io.stderr(`cutout usage: Expected an ISO date or a day count for --since but received ${String(sinceFlag)}\n${HELP}\n`);
    return 2;
  }
  let ledger: LedgerBackend;
  try {
    ledger = await openAdminLedger(args, io, { create: false });
  } catch (err) {
    if (!(err instanceof LedgerCliError)) throw err;
    io.stderr(`cutout usage: ${err.message}\n${err.exitCode === 2 ? HELP + '\n' : ''}`);
    return err.exitCode;
  }
  try {
    const rows = await ledger.summarizeUsage(since);
    if (args.flags.get('json') === true) {
      io.stdout(JSON.stringify({ since: new Date(since).toISOString(), accounts: rows }) + '\n');
      return 0;
    }
    const table = [['ACCOUNT', 'LABEL', 'REQUESTS', 'CREDITS', 'FREE_CALLS', 'OUTPUT_MP', 'STATUSES']];
    for (const r of rows) {
      const statuses = Object.entries(r.statuses)
        .map(([s, n]) => `${s}:${n}`)
        .join(' ');
      table.push([r.accountId, r.label, String(r.requests), String(r.credits), String(r.freeCalls), r.outputMegapixels.toFixed(3), statuses]);
    }
    const widths = table[0]!.map((_, c) => Math.max(...table.map((row) => row[c]!.length)));
    io.stdout(`usage since ${new Date(since).toISOString()}\n`);
    io.stdout(
      table
        .map((row) =>
          row
            .map((cell, c) => cell.padEnd(widths[c]!))
            .join('  ')
            .trimEnd(),
        )
        .join('\n') + '\n',
    );
    return 0;
  } finally {
    await ledger.close();
  }
}
