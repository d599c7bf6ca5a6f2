// Child process that runs the peer library (@imgly/background-removal-node, 'medium' model) as a
// black box for bench/quality.ts. It runs in its own process so that the peer's onnxruntime-node
// build never shares an address space with ours. The peer is AGPL: we only call its public API.
//
// Protocol (IPC, advanced serialization):
//   parent → child: { id: number, imagePath: string }
//   child → parent: { id, ok: true, width, height, rgba: Uint8Array, seconds } | { id, ok: false, error }

import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

export interface PeerRequest {
  id: number;
  imagePath: string;
}

export type PeerResponse =
  | { id: number; ok: true; width: number; height: number; rgba: Uint8Array; seconds: number }
  | { id: number; ok: false; error: string };

const PACKAGE = '@imgly/background-removal-node';

type RemoveBackground = (image: Blob, config: Record<string, unknown>) => Promise<Blob>;

function publicPath(): string {
  const require = createRequire(import.meta.url);
  const entry = require.resolve(PACKAGE); // …/node_modules/@imgly/background-removal-node/dist/index.cjs
  return pathToFileURL(path.dirname(entry)).href + '/';
}

function mimeOf(file: string): string {
  const ext = path.extname(file).toLowerCase();
  return ext === '.png' ? 'image/png' : ext === '.webp' ? 'image/webp' : 'image/jpeg';
}

/** Parses 'image/x-rgba8;width=W;height=H'. */
function rawSize(type: string): { width: number; height: number } {
  const params = new Map(
    type
      .split(';')
      .slice(1)
      .map((p) => p.trim().split('=') as [string, string]),
  );
  const width = Number(params.get('width'));
  const height = Number(params.get('height'));
  if (!(width > 0 && height > 0)) throw new Error(`peer returned unexpected type ${type}`);
  return { width, height };
}

async function main(): Promise<void> {
  const mod = (await import(PACKAGE)) as { removeBackground: RemoveBackground };
  const config = {
    publicPath: publicPath(),
    model: 'medium',
    // Lossless RGBA; the default 'image/png' at quality 0.8 is a 256-colour palette PNG.
    output: { format: 'image/x-rgba8', quality: 1 },
  };
  const send = (msg: PeerResponse): void => {
    process.send?.(msg);
  };
  // Serialise requests: the peer is not meant to run concurrently here.
  let chain = Promise.resolve();
  process.on('message', (msg: PeerRequest) => {
    chain = chain.then(async () => {
      try {
        const bytes = await readFile(msg.imagePath);
        const t0 = performance.now();
        const blob = await mod.removeBackground(new Blob([bytes], { type: mimeOf(msg.imagePath) }), config);
        const rgba = new Uint8Array(await blob.arrayBuffer());
        const seconds = (performance.now() - t0) / 1000;
        const { width, height } = rawSize(blob.type);
        if (rgba.length !== width * height * 4) throw new Error(`peer returned ${rgba.length} bytes for ${width}x${height}`);
        send({ id: msg.id, ok: true, width, height, rgba, seconds });
      } catch (err) {
        send({ id: msg.id, ok: false, error: err instanceof Error ? err.message : String(err) });
      }
    });
  });
  process.on('disconnect', () => process.exit(0));
}

if (process.send !== undefined) {
  main().catch((err: unknown) => {
    console.error('peer: failed to start:', err);
    process.exit(1);
  });
}
