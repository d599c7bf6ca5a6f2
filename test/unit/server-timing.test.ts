// api/removebg.ts serverTiming: the worker's stage timings as a W3C Server-Timing header value.
import t from 'tap';
import { serverTiming } from '../../src/api/removebg.js';

t.test('stages in order, one decimal, odd names and non-numbers left out', async (t) => {
  t.equal(serverTiming({ queue: 3.12, decode: 40, infer: 512.25, total: 600.04 }), 'queue;dur=3.1, decode;dur=40, infer;dur=512.3, total;dur=600');
  t.equal(serverTiming({ 'bad name': 1, 'x,y': 2, ok: Number.NaN, fine: 0 }), 'fine;dur=0');
  t.equal(serverTiming({}), '');
});
