// POST /v1.0/improve: keep a submitted image (and its tag) under <data>/improve/ for later review.
// Returns {"id":"<uuid>"}. The image is sniffed like any other input (its type names the file);
// nothing is charged. The same per-key rules as /removebg apply (a concurrency slot, one rate unit),
// plus a per-account storage quota counted in the ledger: auth → body limit → body → slot → rate →
// image → quota → write. The slot is taken once the body is in: a slow upload holds nothing of its key.

import { randomUUID } from 'node:crypto';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Ledger } from '../ledger/ledger.js';
import type { RequestContext } from '../http/context.js';
import { authenticate, rateHeaders } from './auth.js';
import { admit, bodyOwner } from './admission.js';
import { storageQuotaExceeded, withHeaders } from './errors.js';
import { loadImage, type ImageInputDeps } from './image-input.js';
import { parseImproveRequest } from './params/improve-request.js';

export interface ImproveDeps extends ImageInputDeps {
  ledger: Ledger;
  improveDir: string;
  /** Bytes of improve uploads (image + metadata) each account may store. */
  improveQuotaBytes: number;
}

export async function handleImprove(ctx: RequestContext, deps: ImproveDeps): Promise<void> {
  const { ledger } = deps;
  const account = await authenticate(ctx, ledger);
  ctx.checkBodyLength(); // 413 before the body is read

  const request = parseImproveRequest(await ctx.readFields(bodyOwner(account)));
  ctx.throwIfAborted();

  // The /removebg rules: a slot, one rate unit (nothing is decoded here, so no megapixel units follow).
  const { slot, rate } = await admit(ledger, account);
  try {
    const image = await loadImage(request.source, deps, ctx);
    ctx.throwIfAborted();

    const id = randomUUID();
    const meta = JSON.stringify(
      {
        id,
        account: account.id,
        tag: request.tag ?? null,
        filename: request.filename ?? (request.source.kind === 'bytes' ? (request.source.filename ?? null) : null),
        source: request.source.kind === 'url' ? request.source.url.href : request.source.field,
        receivedAt: new Date().toISOString(),
      },
      null,
      2,
    );
    const bytes = image.bytes.byteLength + Buffer.byteLength(meta);
    const quota = await ledger.reserveStorage(account, bytes, deps.improveQuotaBytes);
    if (!quota.ok) throw withHeaders(storageQuotaExceeded(quota.usedBytes, deps.improveQuotaBytes, bytes), rateHeaders(rate));

    const imagePath = join(deps.improveDir, `${id}.${image.type}`);
    let stored = false;
    try {
      await mkdir(deps.improveDir, { recursive: true });
      // Write the image first: a metadata file always points at a complete image.
      await writeFile(imagePath, image.bytes);
      await writeFile(join(deps.improveDir, `${id}.json`), meta);
      stored = true;
    } finally {
      if (!stored) {
        await quota.release();
        await rm(imagePath, { force: true }).catch(() => undefined);
      }
    }
    await slot.release(); // before the client can see the 200 (as /removebg does)
    ctx.sendJson(200, { id }, rateHeaders(rate));
  } finally {
    await slot.release();
  }
}
