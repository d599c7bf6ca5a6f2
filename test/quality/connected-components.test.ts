import t from 'tap';
import { largestComponent } from '../../bench/quality/metrics.js';

t.test('largest 4-connected component', async (t) => {
  // 1 1 0 1
  // 0 0 0 1      components (4-conn): {(0,0),(1,0)} size 2; {(3,0),(3,1),(3,2),(2,2)} size 4;
  // 1 0 1 1                           {(0,2)} size 1
  const bin = Uint8Array.of(1, 1, 0, 1, 0, 0, 0, 1, 1, 0, 1, 1);
  t.same([...largestComponent(bin, 4, 3)], [0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 1, 1]);
});

t.test('diagonal neighbours are not connected; ties keep the first component', async (t) => {
  t.same([...largestComponent(Uint8Array.of(1, 0, 0, 1), 2, 2)], [1, 0, 0, 0]);
});

t.test('empty input gives an empty component', async (t) => {
  t.same([...largestComponent(new Uint8Array(6), 3, 2)], [0, 0, 0, 0, 0, 0]);
});
