// Byte buffers that can go to a worker without a copy: safe to keep after the memory they came from
// is gone (uWS bodies and parts), and transferable whole.
//
// Two kinds transfer as they are: bytes that span their whole ArrayBuffer, and views on an
// *exclusive* buffer, one that nothing else in this thread uses (a request body read by
// http/body.ts, or bytes a worker handed back by transfer). An upload's image is such a view on its
// body: it goes to the worker with the body's buffer instead of being copied out first (at
// concurrency 4 the copies and the bodies they came from were ~20–60 MB of the main thread's peak,
// docs/memory.md). Only one view on an exclusive buffer may be sent: the transfer detaches it, and
// every other view on it with it.

const exclusive = new WeakSet<ArrayBuffer>();

/** A copy in a fresh, unpooled ArrayBuffer of exactly its length. */
export function ownedCopy(bytes: Uint8Array): Uint8Array {
  const out = new Uint8Array(new ArrayBuffer(bytes.byteLength));
  out.set(bytes);
  return out;
}

/** True when `bytes` spans its whole (non-shared) ArrayBuffer, so it can be transferred as is. */
export function ownsBuffer(bytes: Uint8Array): boolean {
  return bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength && !(bytes.buffer instanceof SharedArrayBuffer);
}

/** A fresh unpooled Buffer whose ArrayBuffer is exclusive: a view on it may take it to a worker. */
export function exclusiveBuffer(size: number): Buffer {
  const buf = Buffer.allocUnsafeSlow(size);
  exclusive.add(buf.buffer);
  return buf;
}

/** Mark a buffer this thread alone holds (one that came by transfer from a worker) as exclusive. */
export function claimExclusive(buffer: ArrayBufferLike): void {
  if (buffer instanceof ArrayBuffer) exclusive.add(buffer);
}

/** True when `bytes` can go to a worker by transfer as it is: it owns its whole buffer, or the buffer is exclusive. */
export function canTransfer(bytes: Uint8Array): boolean {
  const buf = bytes.buffer;
  return buf instanceof ArrayBuffer && buf.byteLength > 0 && (ownsBuffer(bytes) || exclusive.has(buf));
}

/**
 * What to list for transfer when sending `bytes` to a worker: its ArrayBuffer where canTransfer (the
 * worker gets the same view on it), nothing otherwise (then it is cloned). An empty or detached
 * buffer is never listed.
 */
export function transferListOf(bytes: Uint8Array): ArrayBuffer[] {
  return canTransfer(bytes) ? [bytes.buffer as ArrayBuffer] : [];
}
