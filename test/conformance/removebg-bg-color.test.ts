// bg_color takes 3/4/6/8 hex digits (optional #) or a colour name; the worker gets straight RGBA; bad → invalid_bg_color.
import t from 'tap';
import { firstError, postImage } from '../helpers/api.js';
import { makeImage } from '../helpers/images.js';
import { startTestServer } from '../helpers/server.js';

t.test('bg_color values', async (t) => {
  const { url, pool } = await startTestServer(t);
  const img = await makeImage('png');
  const want: Record<string, number[]> = {
    '81d4fa': [0x81, 0xd4, 0xfa, 255],
    fff: [255, 255, 255, 255],
    '81d4fa77': [0x81, 0xd4, 0xfa, 0x77],
    '#00ff00': [0, 255, 0, 255],
    f00c: [255, 0, 0, 0xcc],
    green: [0, 128, 0, 255],
    '00000000': [0, 0, 0, 0],
  };
  for (const [value, rgba] of Object.entries(want)) {
    t.equal((await postImage(url, img, { bg_color: value })).status, 200, value);
    t.same(pool.tasks.at(-1)!.options.bgColor, rgba, value);
  }
});

t.test('invalid bg_color', async (t) => {
  const { url } = await startTestServer(t);
  for (const value of ['12345', 'zzz', 'blurple']) {
    const res = await postImage(url, await makeImage('png'), { bg_color: value });
    t.equal(res.status, 400, value);
    t.equal(firstError(res).code, 'invalid_bg_color');
  }
});
