// API keys: `ck_` + random base62. Only sha256(key) is ever stored; keys carry ~190 bits of entropy, so a
// fast unsalted hash is enough (nothing to brute-force) and keeps authenticate cheap.

import { createHash } from 'node:crypto';
import { randomBase62 } from './ids.js';

export const API_KEY_PREFIX = 'ck_';
const API_KEY_BODY_LENGTH = 32;

export function generateApiKey(): string {
  return API_KEY_PREFIX + randomBase62(API_KEY_BODY_LENGTH);
}

/** What the ledger stores and looks keys up by: hex sha256 of the key as sent. */
export function hashApiKey(apiKey: string): string {
  return createHash('sha256').update(apiKey).digest('hex');
}

export function looksLikeApiKey(text: string): boolean {
  return text.startsWith(API_KEY_PREFIX);
}
