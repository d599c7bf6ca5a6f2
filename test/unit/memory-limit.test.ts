// The memory limit `cutout serve` sizes itself to (src/process/memory-limit.ts), read from made-up
// /proc/self/cgroup tables and cgroup files: the tightest limit along the path, v1 and v2, the host's
// memory where no cgroup limit is below it.
import t from 'tap';
import { cgroupMemoryLimit, memoryLimit, type ReadText } from '../../src/process/memory-limit.js';

const MB = 1024 * 1024;
const files =
  (entries: Record<string, string>): ReadText =>
  (file) =>
    entries[file];

t.test('cgroup v2: the tightest memory.max from the process cgroup up to the root', async (t) => {
  const read = files({
    '/proc/self/cgroup': '0::/app/worker\n',
    '/sys/fs/cgroup/app/worker/memory.max': 'max\n',
    '/sys/fs/cgroup/app/memory.max': `${600 * MB}\n`,
  });
  t.same(cgroupMemoryLimit(read), { bytes: 600 * MB, source: 'cgroup v2 memory.max (/sys/fs/cgroup/app/memory.max)' });
  t.same(memoryLimit(read, 24_000 * MB), { bytes: 600 * MB, source: 'cgroup v2 memory.max (/sys/fs/cgroup/app/memory.max)' });
});

t.test('a container (cgroup namespace): the path is / and the limit sits at the mount root', async (t) => {
  const read = files({ '/proc/self/cgroup': '0::/\n', '/sys/fs/cgroup/memory.max': `${1024 * MB}\n` });
  t.equal(cgroupMemoryLimit(read)?.bytes, 1024 * MB);
});

t.test('cgroup v1 and a hybrid host: memory.limit_in_bytes, "no limit" as 2^63 rounded', async (t) => {
  const table = '9:name=systemd:/\n4:memory:/process_api/abc\n1:cpu:/\n0::/\n';
  t.equal(
    cgroupMemoryLimit(files({ '/proc/self/cgroup': table, '/sys/fs/cgroup/memory/process_api/abc/memory.limit_in_bytes': '9223372036854771712\n' })),
    undefined,
    'unlimited',
  );
  const limited = files({
    '/proc/self/cgroup': table,
    '/sys/fs/cgroup/memory/process_api/abc/memory.limit_in_bytes': `${700 * MB}\n`,
    '/sys/fs/cgroup/memory/process_api/memory.limit_in_bytes': `${900 * MB}\n`,
    '/sys/fs/cgroup/unified/memory.max': `${800 * MB}\n`,
  });
  t.same(cgroupMemoryLimit(limited), {
    bytes: 700 * MB,
    source: 'cgroup v1 memory.limit_in_bytes (/sys/fs/cgroup/memory/process_api/abc/memory.limit_in_bytes)',
  });
});

t.test('the host memory where no cgroup limit is below it; garbage and unreadable files are no limit', async (t) => {
  t.same(memoryLimit(files({}), 2048 * MB), { bytes: 2048 * MB, source: 'host memory' }, 'no /proc/self/cgroup');
  const read = files({ '/proc/self/cgroup': '0::/a:b\n', '/sys/fs/cgroup/a:b/memory.max': `${4096 * MB}` });
  t.same(memoryLimit(read, 2048 * MB), { bytes: 2048 * MB, source: 'host memory' }, 'a cgroup limit above the host memory');
  t.equal(cgroupMemoryLimit(read)?.bytes, 4096 * MB, 'a path with a colon in it');
  for (const text of ['', 'max', '-1', '12abc', '0', '1e9'])
    t.equal(cgroupMemoryLimit(files({ '/proc/self/cgroup': '0::/x\n', '/sys/fs/cgroup/x/memory.max': text })), undefined, JSON.stringify(text));
});
