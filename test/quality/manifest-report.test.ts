import t from 'tap';
import { parseCsv, parseManifest } from '../../bench/quality/manifest.js';
import { median, renderMarkdown, summarize, type ItemResult } from '../../bench/quality/report.js';

t.test('CSV with quotes', async (t) => {
  t.same(parseCsv('a,b\r\n"x, y","say ""hi"""\n'), [
    ['a', 'b'],
    ['x, y', 'say "hi"'],
  ]);
});

t.test('manifest rows', async (t) => {
  const csv = [
    'id,image_path,gt_path,gt_type,trimap_path,category,group,dataset,width,height,notes',
    'am_1,images/am_1.png,gt/am_1.png,alpha_matte,trimaps/am_1.png,hair,am_1,"AM, low-res",800,600,"a, b"',
    'd_1,images/d_1.jpg,gt/d_1.png,binary_mask,,animal,d,DAVIS,854,480,x',
  ].join('\n');
  const rows = parseManifest(csv);
  t.equal(rows.length, 2);
  t.equal(rows[0]!.dataset, 'AM, low-res');
  t.equal(rows[0]!.width, 800);
  t.equal(rows[1]!.trimapPath, '');
  t.equal(rows[1]!.gtType, 'binary_mask');
  t.throws(() => parseManifest(csv.replace('binary_mask', 'other')));
});

t.test('summaries never pool datasets; failures are counted, not fatal', async (t) => {
  const mk = (id: string, dataset: string, category: string, iouV: number, ok = true): ItemResult => ({
    id,
    dataset,
    category,
    gtType: 'binary_mask',
    width: 1,
    height: 1,
    variants: { v: ok ? { ok: true, seconds: iouV, mask: { iou: iouV, boundaryF: 1, mae: 0 } } : { ok: false, error: 'boom' } },
  });
  const items = [mk('a', 'A', 'x', 0.2), mk('b', 'A', 'y', 0.4), mk('c', 'B', 'x', 1), mk('d', 'B', 'x', 0, false)];
  const s = summarize(items, ['v']);
  const allA = s.find((r) => r.dataset === 'A' && r.category === null)!;
  t.ok(Math.abs(allA.metrics.iou! - 0.3) < 1e-12);
  const allB = s.find((r) => r.dataset === 'B' && r.category === null)!;
  t.equal(allB.metrics.iou, 1);
  t.equal(allB.n, 1);
  t.equal(allB.total, 2);
  t.equal(s.length, 2 + 1 + 2, 'A: all + 2 categories, B: all + 1 category (one variant)');
  const md = renderMarkdown(s, items);
  t.match(md, /d \/ v: boom/);
  t.match(md, /\| \*\*all\*\* \| v \| 1\/2 \|/);
});

t.test('median', async (t) => {
  t.equal(median([3, 1, 2]), 2);
  t.equal(median([4, 1, 2, 3]), 2.5);
  t.ok(Number.isNaN(median([])));
});
