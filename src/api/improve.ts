// POST /v1.0/improve: keep a submitted image (and its tag) under <data>/improve/ for later review.
// Returns {"id":"<uuid>"}. The image is sniffed like any other input; nothing is charged.

import { randomUUID } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Ledger } from '../ledger/ledger.js';
import type { RequestContext } from '../http/context.js';
import { parseForm } from '../http/forms.js';
import { authenticate } from './auth.js';
import { fileTooLarge } from './errors.js';
import { loadImage, type ImageInputDeps } from './image-input.js';
import { sniffImageType } from '../image/image-type.js';
import { parseImproveRequest } from './params.js';

export interface ImproveDeps extends ImageInputDeps {
  ledger: Ledger;
  maxBodyBytes: number;
  improveDir: string;
}

export async function handleImprove(ctx: RequestContext, deps: ImproveDeps): Promise<void> {
  const account = authenticate(ctx, deps.ledger);
  if (ctx.declaredLength !== null && ctx.declaredLength > deps.maxBodyBytes) throw fileTooLarge(deps.maxBodyBytes, 'Request body');
  const body = await ctx.readBody(deps.maxBodyBytes);
  const request = parseImproveRequest(parseForm(ctx.header('content-type'), body));
  const image = await loadImage(request.source, deps, ctx.signal);

  const id = randomUUID();
  await mkdir(deps.improveDir, { recursive: true });
  const ext = sniffImageType(image) ?? 'bin';
  // Write the image first: a metadata file always points at a complete image.
  await writeFile(join(deps.improveDir, `${id}.${ext}`), image);
  const meta = {
    id,
    account: account.id,
    tag: request.tag ?? null,
    filename: request.filename ?? (request.source.kind === 'bytes' ? request.source.filename ?? null : null),
    source: request.source.kind === 'url' ? request.source.url.href : request.source.field,
    receivedAt: new Date().toISOString(),
  };
  await writeFile(join(deps.improveDir, `${id}.json`), JSON.stringify(meta, null, 2));
  ctx.sendJson(200, { id });
}
