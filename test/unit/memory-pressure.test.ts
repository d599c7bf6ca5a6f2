// MemoryPressure: the RSS against 95% of the process's limit, read at most every 100 ms.
import t from 'tap';
import { MemoryPressure, PRESSURE_SHARE } from '../../src/process/memory-pressure.js';

const MB = 1024 * 1024;

t.test('high above 95% of the limit, not at or below it', async (t) => {
  let rss = 0;
  let now = 0;
  const p = new MemoryPressure(
    600 * MB,
    () => rss,
    () => now,
  );
  t.equal(p.thresholdBytes, Math.floor(600 * MB * PRESSURE_SHARE));
  rss = 500 * MB;
  t.equal(p.high(), false, '500 of 600 MB');
  now += 100;
  rss = p.thresholdBytes;
  t.equal(p.high(), false, 'exactly at the threshold');
  now += 100;
  rss = 580 * MB;
  t.equal(p.high(), true, '580 of 600 MB');
  t.equal(p.rssBytes(), 580 * MB);
});

t.test('one reading stands for 100 ms (a burst shares one /proc read)', async (t) => {
  let reads = 0;
  let now = 1000;
  const p = new MemoryPressure(
    100 * MB,
    () => (reads++, 99 * MB),
    () => now,
  );
  for (let i = 0; i < 50; i++) p.high();
  t.equal(reads, 1);
  now += 99;
  p.high();
  t.equal(reads, 1, 'still within 100 ms');
  now += 1;
  p.high();
  t.equal(reads, 2, 'read again after 100 ms');
});

t.test('the real reader: this process is well under a 1 TB limit and over a 1 MB one', async (t) => {
  t.equal(new MemoryPressure(1024 * 1024 * MB).high(), false);
  t.equal(new MemoryPressure(1 * MB).high(), true);
  t.ok(new MemoryPressure(1 * MB).rssBytes() > 10 * MB, 'a node process holds more than 10 MB');
});
