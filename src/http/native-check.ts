// uWebSockets.js silently swaps in a slow pure-JS implementation when UWS_USE_FALLBACK is set or
// its binary fails to load (NOTES-ENV §uWebSockets.js). Refuse to serve on it.

import uWS from 'uWebSockets.js';

export class FallbackUwsError extends Error {
  constructor(reason: string) {
    super(
      `uWebSockets.js is running on its pure-JS fallback (${reason}); cutout refuses to serve on it. ` +
        `Unset UWS_USE_FALLBACK and use a Node.js version with a matching uws_${process.platform}_${process.arch}_${process.versions.modules}.node binary.`,
    );
    this.name = 'FallbackUwsError';
  }
}

/** Throws FallbackUwsError unless the native uWS binary is the one loaded. */
export function assertNativeUws(): void {
  const env = process.env.UWS_USE_FALLBACK;
  if (env && /^(1|true)$/i.test(env)) throw new FallbackUwsError('UWS_USE_FALLBACK is set');
  // Native exports are C++ functions: their source text is "[native code]".
  const native = typeof uWS.App === 'function' && Function.prototype.toString.call(uWS.App).includes('[native code]');
  if (!native) throw new FallbackUwsError('the native binary did not load');
}
