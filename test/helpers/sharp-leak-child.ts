// Child for test/native/codec-leak.test: encodes one ~1.5 MB PNG many times through encodePng and
// prints the RSS before and after as one JSON line. Run with --expose-gc so both readings follow a GC.
import { encodePng, type Raw } from '../../src/worker/codec.js';

export interface LeakReport {
  calls: number;
  bytes: number;
  before: number;
  after: number;
}

// Full-entropy RGBA: deflate cannot shrink it, so the PNG is ~1.5 MB yet quick to encode (~25 ms).
const WIDTH = 640;
const HEIGHT = 600;
const WARMUP = 20;
const CALLS = 300;

function noise(n: number): Buffer {
  const out = Buffer.alloc(n);
  let s = 1;
  for (let i = 0; i < n; i++) {
    s = (Math.imul(s, 1103515245) + 12345) >>> 0;
    out[i] = s >>> 24;
  }
  return out;
}

const raw: Raw = { data: noise(WIDTH * HEIGHT * 4), width: WIDTH, height: HEIGHT, channels: 4 };
const gc = (globalThis as { gc?: () => void }).gc ?? (() => {});

for (let i = 0; i < WARMUP; i++) await encodePng(raw);
gc();
const before = process.memoryUsage().rss;
let bytes = 0;
for (let i = 0; i < CALLS; i++) bytes = (await encodePng(raw)).data.byteLength;
gc();
const report: LeakReport = { calls: CALLS, bytes, before, after: process.memoryUsage().rss };
process.stdout.write(`${JSON.stringify(report)}\n`);
