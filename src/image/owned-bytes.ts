// Byte buffers that own their whole ArrayBuffer: safe to keep after the memory they came from is
// gone (uWS bodies and parts), and transferable to a worker without a copy.

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
