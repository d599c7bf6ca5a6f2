// API keys and ids: random base62 strings. Only sha256(key) is ever stored; keys carry ~190 bits of
// entropy, so a fast unsalted hash is enough (nothing to brute-force) and keeps authenticate cheap.

import { createHash, randomBytes } from 'node:crypto';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
export const API_KEY_PREFIX = 'ck_';
const API_KEY_BODY_LENGTH = 32;

/** Uniform base62 string via rejection sampling (bytes ≥ 248 would bias the modulo). */
export function randomBase62(length: number): string {
  let out = '';
  while (out.length < length) {
    for (const byte of randomBytes(length * 2)) {
      if (byte < 248) out += BASE62[byte % 62];
      if (out.length === length) break;
    }
  }
  return out;
}

export function generateApiKey(): string {
  return API_KEY_PREFIX + randomBase62(API_KEY_BODY_LENGTH);
}

/** Lookup key for the keys sub-db: hex sha256 of the key as sent. */
export function hashApiKey(apiKey: string): string {
  return createHash('sha256').update(apiKey).digest('hex');
}

export function looksLikeApiKey(text: string): boolean {
  return text.startsWith(API_KEY_PREFIX);
}
