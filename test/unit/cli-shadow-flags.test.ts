// cli/shadow-flags.ts: `cutout remove --shadow KIND [--shadow-opacity N]` → RemoveOptions.shadow, with
// the HTTP API's meaning (opacity 0 or none = no shadow; the default opacity is remove.bg's auto).
import t from 'tap';
import { parseArgs } from '../../src/cli/args.js';
import { parseShadowFlags } from '../../src/cli/shadow-flags.js';

const flags = (...argv: string[]) => parseShadowFlags(parseArgs(['x.jpg', ...argv]).flags);

t.test('kinds, default and given opacities', async (t) => {
  t.same(flags(), {}, 'no flag: no shadow');
  t.same(flags('--shadow', 'drop'), { shadow: { type: 'drop', opacity: 50 } });
  t.same(flags('--shadow', '3D'), { shadow: { type: '3D', opacity: 50 } });
  t.same(flags('--shadow=3d'), { shadow: { type: '3D', opacity: 50 } }, 'any case');
  t.same(flags('--shadow', 'car'), { shadow: { type: 'car', opacity: 90 } });
  t.same(flags('--shadow', 'car', '--shadow-opacity', '35'), { shadow: { type: 'car', opacity: 35 } });
  t.same(flags('--shadow', 'drop', '--shadow-opacity', '100'), { shadow: { type: 'drop', opacity: 100 } });
  t.same(flags('--shadow', 'drop', '--shadow-opacity', '0'), {}, 'opacity 0: none');
  t.same(flags('--shadow', 'none'), {});
  t.same(flags('--shadow', 'none', '--shadow-opacity', '40'), {});
});

t.test('usage errors', async (t) => {
  t.same(flags('--shadow', 'long'), { error: "unknown --shadow 'long' (expected none, drop, 3D, car)" });
  t.same(flags('--shadow'), { error: '--shadow needs a kind: none, drop, 3D, car' });
  t.same(flags('--shadow-opacity', '40'), { error: '--shadow-opacity needs --shadow' });
  for (const bad of ['101', '-1', '50.5', 'auto', 'x']) {
    t.same(flags('--shadow', 'drop', `--shadow-opacity=${bad}`), { error: '--shadow-opacity expects an integer from 0 to 100' }, bad);
  }
  t.same(flags('--shadow', 'drop', '--shadow-opacity'), { error: '--shadow-opacity expects an integer from 0 to 100' }, 'no value');
});
