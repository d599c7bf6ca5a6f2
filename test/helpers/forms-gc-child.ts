// Child process for test/unit/forms-use-after-free.test.ts (run with --expose-gc): parse a multipart
// body, drop every reference to the body, force a collection, reuse the memory, then read the parts.
// Prints one JSON line: { ok, mismatches } — or dies by signal when a part points into freed memory.
import { isFilePart } from '../../src/http/fields.js';
import { parseForm } from '../../src/http/forms.js';

const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) throw new Error('run with --expose-gc');

const SIZE = 600 * 1024;
const expected = (i: number): number => (i * 31 + 7) & 0xff;

function makeBody(): { body: Buffer; contentType: string } {
  const head = Buffer.from('--b0undary\r\nContent-Disposition: form-data; name="image_file"; filename="x.png"\r\nContent-Type: image/png\r\n\r\n');
  const mid = Buffer.from('\r\n--b0undary\r\nContent-Disposition: form-data; name="size"\r\n\r\nfull\r\n--b0undary--\r\n');
  // Unpooled, like http/body.ts: the ArrayBuffer is the body's alone and dies with it.
  const body = Buffer.allocUnsafeSlow(head.length + SIZE + mid.length);
  head.copy(body, 0);
  for (let i = 0; i < SIZE; i++) body[head.length + i] = expected(i);
  mid.copy(body, head.length + SIZE);
  return { body, contentType: 'multipart/form-data; boundary=b0undary' };
}

function parseAndDrop(): Uint8Array[] {
  const { body, contentType } = makeBody();
  const f = parseForm(contentType, body);
  const part = f.get('image_file');
  if (!isFilePart(part)) throw new Error('no image_file part');
  return [part.data];
}

const kept: Uint8Array[] = [];
for (let round = 0; round < 8; round++) kept.push(...parseAndDrop());
// The bodies are unreachable now: collect them, then fill fresh allocations of the same size with
// another pattern, so freed memory, if a part still points there, holds different bytes.
for (let i = 0; i < 4; i++) gc();
const filler: Buffer[] = [];
for (let i = 0; i < 64; i++) filler.push(Buffer.allocUnsafeSlow(SIZE + 256).fill(0xa5));
gc();

let mismatches = 0;
for (const data of kept) {
  if (data.byteLength !== SIZE) {
    mismatches++;
    continue;
  }
  for (let i = 0; i < SIZE; i++) {
    if (data[i] !== expected(i)) {
      mismatches++;
      break;
    }
  }
}
process.stdout.write(`${JSON.stringify({ ok: mismatches === 0, parts: kept.length, mismatches, filler: filler.length })}\n`);
