// A photo's passes take the cores left idle by the photos at work with it, never fewer than the worker's own share.
import t from 'tap';
import { photoThreadsNow } from '../../src/pool/photo-threads.js';

t.test('a lone photo takes every core; under load each keeps its share', async (t) => {
  t.equal(photoThreadsNow(16, 1, 1), 16, 'GPU box, one photo in work: all 16 cores');
  t.equal(photoThreadsNow(16, 4, 1), 4, 'four photos: four cores each');
  t.equal(photoThreadsNow(16, 16, 1), 1, 'every photo worker busy: one each');
  t.equal(photoThreadsNow(16, 5, 1), 3, 'shares round down');
  t.equal(photoThreadsNow(16, 1, 2), 16, 'CPU path, 8 workers x 2 threads, one busy: all 16 for its composite');
  t.equal(photoThreadsNow(16, 8, 2), 2, "CPU path, all busy: the worker's 2 ORT threads");
  t.equal(photoThreadsNow(2, 1, 2), 2, '2-core box, one worker: its 2 threads, as before');
});

t.test('odd inputs stay in range', async (t) => {
  t.equal(photoThreadsNow(16, 0, 1), 16, 'running 0 counts as this one');
  t.equal(photoThreadsNow(4, 9, 2), 2, 'more running than cores: the floor');
  t.equal(photoThreadsNow(1, 1, 1), 1, 'one core');
  t.equal(photoThreadsNow(4, 1, 8), 8, 'a floor above the cores (threadsPerWorker set by hand) wins');
});
