// Empty-string fields (official remove.bg CLI) mean "not given" and use the defaults.
import t from 'tap';
import { postImage } from '../helpers/api.js';
import { makeImage } from '../helpers/images.js';
import { startTestServer } from '../helpers/server.js';

t.test('the CLI shape: every optional field sent as ""', async (t) => {
  const { url, pool } = await startTestServer(t);
  const fields = Object.fromEntries(
    [
      'type',
      'type_level',
      'roi',
      'crop',
      'crop_margin',
      'scale',
      'position',
      'add_shadow',
      'semitransparency',
      'bg_color',
      'size',
      'format',
      'channels',
      'image_url',
      'image_file_b64',
      'bg_image_url',
    ].map((k) => [k, '']),
  );
  const res = await postImage(url, await makeImage('png'), fields);
  t.equal(res.status, 200);
  const opts = pool.tasks[0]!.options;
  t.equal(opts.size, 'preview');
  t.equal(opts.format, 'auto');
  t.equal(opts.channels, 'rgba');
  t.equal(opts.crop, false);
  t.equal(opts.bgColor, undefined);
  t.equal(opts.roi, undefined);
});
