// SPDX-License-Identifier: MIT
// Dumps the alphamatting dev items (image RGB, GT alpha, trimap) as raw "W H C\n"+bytes files into
// OUT (default: cutout_eval in the system's temporary folder) for refine_eval.cc (the harness has no
// PNG decoder). Research data: read from $CUTOUT_EVAL_DIR (else ../shared/eval/dev beside the
// checkout) and written outside the repository only.
//   node native/test/dump_eval.cjs [OUT]
const path = require('path');
const os = require('os');
const sharp = require(path.join(__dirname, '../../node_modules/sharp'));
const fs = require('fs');
const D = process.env.CUTOUT_EVAL_DIR || path.resolve(__dirname, '../../../shared/eval/dev');
const OUT = process.argv[2] || path.join(os.tmpdir(), 'cutout_eval');
fs.mkdirSync(OUT, { recursive: true });
(async () => {
  const ids = fs.readdirSync(D + '/gt').filter(f => f.startsWith('am_')).map(f => f.replace('.png', ''));
  for (const id of ids) {
    for (const [sub, ch] of [['images', 3], ['gt', 1], ['trimaps', 1]]) {
      let s = sharp(`${D}/${sub}/${id}.png`).removeAlpha();
      if (ch === 1) s = s.extractChannel(0); // R=G=B
      const { data, info } = await s.raw().toBuffer({ resolveWithObject: true });
      const hdr = Buffer.from(`${info.width} ${info.height} ${info.channels}\n`);
      fs.writeFileSync(path.join(OUT, `${id}_${sub}.bin`), Buffer.concat([hdr, data]));
    }
    console.log(id);
  }
  fs.writeFileSync(path.join(OUT, 'ids.txt'), ids.join('\n') + '\n');
})();
