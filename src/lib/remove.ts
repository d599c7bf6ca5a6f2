// Library API: removeBackground(input, options) on a lazily created shared pool, or an explicit
// remover (createRemover) whose pool the caller closes. An edge, like the HTTP API: the input's type
// is sniffed here (JPEG, PNG or WebP), once, before it goes to a worker, and every option checked
// (check-options.ts).
import { createRemovalPool, type PoolOptions, type RemovalPool } from '../pool/pool.js';
import { DEFAULT_OPTIONS, type RemoveOptions } from '../domain/removal.js';
import { describeFileType, sniffImageType } from '../image/image-type.js';
import type { RemoveInputOptions, RemoveOutput } from './remove-api.js';
import { checkQuality, checkRemoveOptions } from './check-options.js';

export type { RemoveInputOptions, RemoveOutput } from './remove-api.js';

export class RemoveError extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = 'RemoveError';
  }
}

function checkInput(input: unknown): void {
  if (!(input instanceof Uint8Array)) {
    const shown =
      input === null
        ? 'null'
        : typeof input === 'object'
          ? `an object of type ${input.constructor?.name ?? 'Object'}`
          : `${String(input).slice(0, 40)} of type ${typeof input}`;
    throw Object.assign(new TypeError(`Expected a Uint8Array or Buffer for input but received ${shown}`), { code: 'ERR_INVALID_ARG_TYPE' });
  }
}

export interface Remover {
  /**
   * Remove the background of one encoded image. The caller's buffer is left intact (copied once on
   * its way to the worker) unless `transferInput` is set: then its ArrayBuffer moves to the worker
   * without a copy and is detached here.
   */
  remove(input: Uint8Array, options?: RemoveInputOptions & { transferInput?: boolean }): Promise<RemoveOutput>;
  readonly pool: RemovalPool;
  close(): Promise<void>;
}

export async function createRemover(poolOptions: PoolOptions = {}): Promise<Remover> {
  checkQuality(poolOptions.quality, 'quality');
  const pool = await createRemovalPool(poolOptions);
  return {
    pool,
    async remove(input: Uint8Array, options: RemoveInputOptions & { transferInput?: boolean } = {}): Promise<RemoveOutput> {
      // Capture the caller's stack before crossing into the worker (as sharp does).
      const stack = new Error().stack;
      const fail = (code: string, message: string): RemoveError => {
        const err = new RemoveError(code, message);
        if (stack) err.stack = `${err.name}: ${err.message}\n${stack.split('\n').slice(1).join('\n')}`;
        return err;
      };
      const { transferInput, ...rest } = options;
      checkInput(input);
      checkRemoveOptions(rest);
      if (!sniffImageType(input)) throw fail('invalid_file_type', `Expected jpg/png/webp, received ${describeFileType(input)}`);
      const opts: RemoveOptions = { ...DEFAULT_OPTIONS, ...rest };
      const result = await pool.run({ input: transferInput ? input : new Uint8Array(input), options: opts });
      if (!result.ok) throw fail(result.code, result.message);
      return {
        data: Buffer.from(result.data.buffer, result.data.byteOffset, result.data.byteLength),
        width: result.width,
        height: result.height,
        contentType: result.contentType,
        foreground: result.foreground,
      };
    },
    close: () => pool.close(),
  };
}

let shared: Promise<Remover> | undefined;

/** Remove the background with a process-wide default pool (created on first use; see closeDefaultPool). */
export async function removeBackground(input: Uint8Array, options?: RemoveInputOptions): Promise<RemoveOutput> {
  shared ??= createRemover();
  return (await shared).remove(input, options);
}

export async function closeDefaultPool(): Promise<void> {
  if (!shared) return;
  const r = shared;
  shared = undefined;
  await (await r).close();
}
