// POST /v1.0/removebg: auth → body limit → body → params → slot → rate → images → reserve →
// pool → settle/refund → respond. Credits and slots move only in try/finally pairs. The slot is taken
// once the body is in: a slow or stuck upload holds nothing of its key, while a request being worked
// on (its image downloads included, bounded by the fetch timeout) counts against the cap.

import type { AccountView, Ledger, RateState, Slot } from '../ledger/ledger.js';
import { backlogSeconds, type RemovalPool, type RunPriority } from '../pool/pool-api.js';
import type { RemoveOptions, RequestedSize, SizeTier } from '../domain/removal.js';
import type { RemoveSuccess } from '../pool/protocol.js';
import type { RequestContext } from '../http/context.js';
import type { BodyOwner } from '../http/body-budget.js';
import { InsufficientCreditsError } from '../ledger/ledger.js';
import { authenticate, rateHeaders } from './auth.js';
import { admit, bodyOwner } from './admission.js';
import { fromRemoveFailure, insufficientCredits, ledgerUnavailable, serviceBusy } from './errors.js';
import { loadImage, type ImageInputDeps } from './image-input.js';
import { wantsJson } from './params/accept.js';
import { parseRemoveRequest } from './params/remove-request.js';
import type { ApiError } from './errors.js';

export interface RemoveBgDeps extends ImageInputDeps {
  ledger: Ledger;
  pool: RemovalPool;
  log: { error(msg: string, err?: unknown): void };
}

/** Rate-limit units for an input: its megapixels rounded up, at least 1 (REMOVEBG-API §3). */
export const rateUnits = (width: number, height: number): number => Math.max(1, Math.ceil((width * height) / 1_000_000));

/** What a removal holds until it is answered: the tier it may produce and the credits for it. */
export interface Charge {
  size: SizeTier;
  /** Integer credits (X-Credits-Charged). */
  credits: number;
  /** Make it final (the 200 is about to go out). */
  settle(outputPixels: number): Promise<void>;
  /** Give it back (a failure, the client left, the deadline passed). */
  refund(): Promise<void>;
}

/**
 * What differs between a keyed removal and a sandbox one; everything else (the body, the fields,
 * the images, the pool, the answer) is the one path below, `runRemoval`.
 */
export interface RemovalTerms {
  /** Whose share of the bodies-in-memory budget the body counts against (http/body-budget.ts). */
  bodyOwner: BodyOwner;
  /** Hold what the removal costs at `size` (402 when the account cannot pay). */
  reserve(size: RequestedSize): Promise<Charge>;
  /** The rate headers of the 200, once the input's size is known (a keyed request pays its further units here). */
  rateAfter(result: RemoveSuccess): RateState | Promise<RateState>;
  /**
   * The body is in: take what the request holds while it is worked on (a keyed
   * request's concurrency slot and first rate unit; 429 at the cap). Given back by the caller's finally.
   */
  admit?(): Promise<void>;
  /** Where the task queues: the sandbox's wait behind every keyed one. */
  priority: RunPriority;
  /** The pool refused a low-priority task: its share is full. */
  shareFull?(): ApiError;
  /** Called once the charge is settled, just before the 200 (frees the key's slot). */
  beforeRespond?(): void | Promise<void>;
}

export async function handleRemoveBg(ctx: RequestContext, deps: RemoveBgDeps): Promise<void> {
  const { ledger } = deps;
  const account = await authenticate(ctx, ledger);
  ctx.notes.accountId = account.id;
  ctx.checkBodyLength(); // 413 before the body is read

  const terms = keyedTerms(ledger, account);
  try {
    await runRemoval(ctx, deps, terms);
  } finally {
    await terms.release();
  }
}

/**
 * A keyed request's terms. `admit` takes a slot and one rate unit once the body is in (the input
 * size is unknown yet; the rest once the worker has decoded it); `release` gives the slot back.
 */
function keyedTerms(ledger: Ledger, account: AccountView): RemovalTerms & { release(): Promise<void> } {
  let slot: Slot | undefined;
  let rate: RateState | undefined;
  return {
    priority: 'normal',
    bodyOwner: bodyOwner(account),
    async admit() {
      ({ slot, rate } = await admit(ledger, account));
    },
    release: async () => slot?.release(),
    async reserve(size) {
      let reservation: Awaited<ReturnType<Ledger['reserve']>>;
      try {
        reservation = await ledger.reserve(account, size);
      } catch (err) {
        if (err instanceof InsufficientCreditsError || (err as { code?: string })?.code === 'insufficient_credits') {
          throw insufficientCredits();
        }
        throw err;
      }
      return {
        size: reservation.size,
        credits: reservation.credits,
        async settle(outputPixels) {
          // Never a result without its charge: a settle that found no hold charged nothing.
          if ((await ledger.settle(reservation, { outputPixels, status: 200 })) === false) throw ledgerUnavailable();
        },
        refund: () => ledger.refund(reservation),
      };
    },
    async rateAfter(result) {
      const extra = rateUnits(result.inputWidth, result.inputHeight) - 1;
      return extra > 0 ? await ledger.takeRate(account, extra) : rate!; // charged after the fact; may go over
    },
    // Free the slot before the client can see the 200: its next request (maybe on another
    // process or node) must not meet a cap still counting this one. release() is idempotent.
    beforeRespond: async () => slot?.release(),
  };
}

/** body → params → images → hold → pool → settle or refund → respond. Credits move only in try/finally pairs. */
export async function runRemoval(ctx: RequestContext, deps: RemoveBgDeps, terms: RemovalTerms): Promise<void> {
  const { pool } = deps;
  const request = parseRemoveRequest(await ctx.readFields(terms.bodyOwner));
  ctx.throwIfAborted();
  await terms.admit?.(); // the body is in: from here the request is worked on (its downloads included)
  ctx.throwIfAborted();
  const input = (await loadImage(request.source, deps, ctx)).bytes;
  const bgImage = request.bgSource ? (await loadImage(request.bgSource, deps, ctx)).bytes : undefined;
  ctx.throwIfAborted();

  const charge = await terms.reserve(request.size);
  let settled = false;
  try {
    ctx.throwIfAborted();
    const options: RemoveOptions = { ...request.options, size: charge.size };
    if (bgImage) options.bgImage = bgImage;
    let result: Awaited<ReturnType<RemovalPool['run']>>;
    ctx.phase = 'queued';
    try {
      result = await pool.run({ input, options }, ctx.signal, { onStart: () => (ctx.phase = 'running') }, terms.priority);
    } catch (err) {
      const code = (err as { code?: string })?.code;
      if (code === 'queue_full') throw serviceBusy(backlogSeconds(pool.stats()));
      if (code === 'share_full' && terms.shareFull) throw terms.shareFull();
      ctx.throwIfAborted(); // the client left, or the deadline passed (dispatch answers it)
      throw err; // a worker failure: a 500
    }
    ctx.throwIfAborted(); // finished after the client left or past the deadline: refund below
    if (!result.ok) {
      if (result.cause) ctx.notes.cause = result.cause; // the decoder's own words, for the request log
      const err = fromRemoveFailure(result.code, result.message);
      // The client sees a generic 500; the operator needs the worker's own words.
      if (err.code === 'internal_error')
        deps.log.error(`internal_error on request #${ctx.id} ${ctx.method} ${ctx.path}: worker failed (${result.code}): ${result.message}`);
      throw err;
    }

    const rateState = await terms.rateAfter(result);
    await charge.settle(result.width * result.height);
    settled = true;
    await terms.beforeRespond?.();
    Object.assign(ctx.notes, { width: result.width, height: result.height, timings: result.timings, creditsCharged: charge.credits });
    respond(ctx, result, charge.credits, rateState, wantsJson(ctx.header('accept')));
  } finally {
    if (!settled) await charge.refund();
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
