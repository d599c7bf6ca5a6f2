// SPDX-License-Identifier: MIT
// Dumps the alphamatting dev items (image RGB, GT alpha, trimap) as raw "W H C\n"+bytes files into
// /tmp/cutout_eval for refine_eval.cc (the harness has no PNG decoder). Research data: it is read
// from /work/shared/eval/dev and written to /tmp only, never into the repo.
//   node native/test/dump_eval.cjs
const path = require('path');
const sharp = require(path.join(__dirname, '../../node_modules/sharp'));
const fs = require('fs');
const D = '/work/shared/eval/dev';
fs.mkdirSync('/tmp/cutout_eval', { recursive: true });
(async () => {
  const ids = fs.readdirSync(D + '/gt').filter(f => f.startsWith('am_')).map(f => f.replace('.png', ''));
  for (const id of ids) {
    for (const [sub, ch] of [['images', 3], ['gt', 1], ['trimaps', 1]]) {
      let s = sharp(`${D}/${sub}/${id}.png`).removeAlpha();
      if (ch === 1) s = s.extractChannel(0); // R=G=B
      const { data, info } = await s.raw().toBuffer({ resolveWithObject: true });
      const hdr = Buffer.from(`${info.width} ${info.height} ${info.channels}\n`);
      fs.writeFileSync(`/tmp/cutout_eval/${id}_${sub}.bin`, Buffer.concat([hdr, data]));
    }
    console.log(id);
  }
  fs.writeFileSync('/tmp/cutout_eval/ids.txt', ids.join('\n') + '\n');
})();
