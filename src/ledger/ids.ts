// The ledger's one id generator. Record ids (holds, slots, usage entries) must be unique across
// processes, nodes and restarts without any coordination; account ids are random and shown to people.

import { randomBytes } from 'node:crypto';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

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

// ~59 random bits per process: two processes sharing a tag is not a practical concern.
const PROCESS_TAG = randomBase62(10);
let counter = 0;

/** `<process tag>.<counter>`: unique everywhere, and cheap (no random bytes per call). */
export function nextId(): string {
  return `${PROCESS_TAG}.${(counter++).toString(36)}`;
}

/** `acct_` + 12 random base62 characters. */
export function newAccountId(): string {
  return 'acct_' + randomBase62(12);
}
