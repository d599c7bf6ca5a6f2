// POST /v1.0/removebg: auth → body limit → slot → rate → body → params → images → reserve →
// pool → settle/refund → respond. Credits and slots move only in try/finally pairs.

import type { Ledger, RateState } from '../ledger/ledger.js';
import { backlogSeconds, type RemovalPool } from '../pool/pool-api.js';
import type { RemoveOptions } from '../domain/removal.js';
import type { RemoveSuccess } from '../pool/task.js';
import type { RequestContext } from '../http/context.js';
import { InsufficientCreditsError } from '../ledger/ledger.js';
import { authenticate, rateHeaders } from './auth.js';
import { admit } from './admission.js';
import { fromRemoveFailure, insufficientCredits, serviceBusy } from './errors.js';
import { loadImage, type ImageInputDeps } from './image-input.js';
import { wantsJson } from './params/accept.js';
import { parseRemoveRequest } from './params/remove-request.js';

export interface RemoveBgDeps extends ImageInputDeps {
  ledger: Ledger;
  pool: RemovalPool;
  log: { error(msg: string, err?: unknown): void };
}

/** Rate-limit units for an input: its megapixels rounded up, at least 1 (REMOVEBG-API §3). */
export const rateUnits = (width: number, height: number): number => Math.max(1, Math.ceil((width * height) / 1_000_000));

export async function handleRemoveBg(ctx: RequestContext, deps: RemoveBgDeps): Promise<void> {
  const { ledger, pool } = deps;
  const account = await authenticate(ctx, ledger);
  ctx.checkBodyLength(); // 413 before a slot is held

  // A slot and one rate unit up front (the input size is unknown yet); the rest once the worker has decoded it.
  const { slot, rate } = await admit(ledger, account);
  try {
    let rateState: RateState = rate;

    const request = parseRemoveRequest(await ctx.readFields());
    const input = (await loadImage(request.source, deps, ctx.signal)).bytes;
    const bgImage = request.bgSource ? (await loadImage(request.bgSource, deps, ctx.signal)).bytes : undefined;
    ctx.throwIfAborted();

    let reservation;
    try {
      reservation = await ledger.reserve(account, request.size);
    } catch (err) {
      if (err instanceof InsufficientCreditsError || (err as { code?: string })?.code === 'insufficient_credits') {
        throw insufficientCredits();
      }
      throw err;
    }

    let settled = false;
    try {
      ctx.throwIfAborted();
      const options: RemoveOptions = { ...request.options, size: reservation.size };
      if (bgImage) options.bgImage = bgImage;
      let result;
      ctx.phase = 'queued';
      try {
        result = await pool.run({ input, options }, ctx.signal, { onStart: () => (ctx.phase = 'running') });
      } catch (err) {
        const code = (err as { code?: string })?.code;
        if (code === 'queue_full') throw serviceBusy(backlogSeconds(pool.stats()));
        ctx.throwIfAborted(); // the client left, or the deadline passed (dispatch answers it)
        throw err; // a worker failure: a 500
      }
      ctx.throwIfAborted(); // finished after the client left or past the deadline: refund below
      if (!result.ok) {
        const err = fromRemoveFailure(result.code, result.message);
        // The client sees a generic 500; the operator needs the worker's own words.
        if (err.code === 'internal_error') deps.log.error(`internal_error on request #${ctx.id} ${ctx.method} ${ctx.path}: worker failed (${result.code}): ${result.message}`);
        throw err;
      }

      const extra = rateUnits(result.inputWidth, result.inputHeight) - 1;
      if (extra > 0) rateState = await ledger.takeRate(account, extra); // charged after the fact; may go over
      await ledger.settle(reservation, { outputPixels: result.width * result.height, status: 200 });
      settled = true;
      // Free the slot before the client can see the 200: its next request (maybe on another
      // process or node) must not meet a cap still counting this one. release() is idempotent.
      await slot.release();
      respond(ctx, result, reservation.credits, rateState, wantsJson(ctx.header('accept')));
    } finally {
      if (!settled) await ledger.refund(reservation);
    }
  } finally {
    await slot.release();
  }
}

/** `Server-Timing: queue;dur=3.1, decode;dur=40.2, …` (W3C Server Timing) from the stage timings. */
export function serverTiming(timings: Readonly<Record<string, number>>): string {
  return Object.entries(timings)
    .filter(([name, ms]) => /^[A-Za-z][\w-]*$/.test(name) && Number.isFinite(ms))
    .map(([name, ms]) => `${name};dur=${Math.round(ms * 10) / 10}`)
    .join(', ');
}

/** The 200: the image (or remove.bg's JSON result) with its X-* headers; the foreground box as the worker gave it. */
function respond(ctx: RequestContext, result: RemoveSuccess, credits: number, rate: RateState, json: boolean): void {
  const fg = result.foreground;
  const headers: Record<string, string> = {
    'X-Width': String(result.width),
    'X-Height': String(result.height),
    'X-Max-Width': String(result.width),
    'X-Max-Height': String(result.height),
    'X-Credits-Charged': String(Math.round(credits)),
    'X-Processing-Time-Ms': String(Math.round(performance.now() - ctx.startedAt)),
    'X-Dropin-Provider': 'cutout',
    // Where the time went (queue wait and worker stages), for operators and bench:soak.
    ...(Object.keys(result.timings).length > 0 && { 'Server-Timing': serverTiming(result.timings) }),
    'X-Foreground-Top': String(fg.top),
    'X-Foreground-Left': String(fg.left),
    'X-Foreground-Width': String(fg.width),
    'X-Foreground-Height': String(fg.height),
    ...rateHeaders(rate),
  };
  if (json) {
    const data = Buffer.from(result.data.buffer, result.data.byteOffset, result.data.byteLength);
    ctx.sendJson(
      200,
      {
        data: {
          result_b64: data.toString('base64'),
          foreground_top: fg.top,
          foreground_left: fg.left,
          foreground_width: fg.width,
          foreground_height: fg.height,
        },
      },
      headers,
    );
  } else {
    ctx.send(200, { 'Content-Type': result.contentType, ...headers }, result.data);
  }
}
