// One structured log line per request (pino): its id (X-Request-Id), the account (never the key),
// route, status, output size, ms per stage, bytes in and out, total ms. JSON lines by default; on a
// terminal, the same record as one readable line (pretty-line.ts), formatted in this thread.
// No pino transport: it would start a worker thread (+10 MB RSS); lines go to a sonic-boom
// destination (pino.destination), asynchronous, flushed on shutdown.
// pino (29 modules, ~1 MB of RSS) is loaded when the first request ends, once, synchronously: an
// idle server never needs it, and the idle RSS budget has no megabyte to spare.

import { createRequire } from 'node:module';
import type { DestinationStream, Logger as PinoLogger } from 'pino';
import type pinoModule from 'pino';
import type { RequestInfo, RequestObserver } from '../http/server.js';
import { prettyLine } from './pretty-line.js';
import { stageMs } from './stages.js';

export interface RequestLog extends RequestObserver {
  /** Write out what is buffered (at shutdown). */
  flush(): void;
}

export interface RequestLogOptions {
  /** Where lines go; default stdout through sonic-boom. */
  destination?: DestinationStream;
  /** The readable one-line form instead of JSON (default: when stdout is a terminal). */
  pretty?: boolean;
}

const require = createRequire(import.meta.url);

export function createRequestLog(opts: RequestLogOptions = {}): RequestLog {
  const pretty = opts.pretty ?? process.stdout.isTTY === true;
  let boom: ReturnType<typeof pinoModule.destination> | undefined;
  let logger: PinoLogger | undefined;

  function start(): PinoLogger {
    const pino = require('pino') as typeof pinoModule;
    boom = opts.destination ? undefined : pino.destination({ dest: 1, sync: false });
    const out: DestinationStream = opts.destination ?? boom!;
    const stream: DestinationStream = pretty ? { write: (line: string) => out.write(prettyLine(line)) } : out;
    return pino(
      {
        base: { pid: process.pid },
        timestamp: pino.stdTimeFunctions.isoTime,
        formatters: { level: (label) => ({ level: label }) },
      },
      stream,
    );
  }

  return {
    onRequestEnd(info: RequestInfo) {
      logger ??= start();
      const n = info.notes;
      const ms = stageMs(n.timings);
      const record = {
        req_id: info.requestId,
        method: info.method,
        // The route, never the path: a client can put anything in a path, a key included.
        route: info.route,
        status: info.status,
        ...(info.errorCode !== undefined && { code: info.errorCode }),
        ...(n.rejection !== undefined && { rejection: n.rejection }),
        ...(n.cause !== undefined && { cause: n.cause }),
        account: n.accountId ?? null,
        client: info.clientAddress,
        ...(n.width !== undefined && n.height !== undefined && { output: `${n.width}x${n.height}` }),
        ...(Object.keys(ms).length > 0 && { ms }),
        ...(n.creditsCharged !== undefined && { credits: n.creditsCharged }),
        bytes_in: info.bytesIn,
        bytes_out: info.bytesOut,
        total_ms: Math.round(info.durationMs * 10) / 10,
        ...(info.aborted && { aborted: true }),
        ...(info.timedOut && { timed_out: true }),
      };
      if (info.status >= 500 && info.status !== 503) logger.error(record, 'request');
      else logger.info(record, 'request');
    },
    flush() {
      try {
        boom?.flushSync();
      } catch {
        // nothing buffered, or stdout is gone: nothing to save
      }
    },
  };
}
