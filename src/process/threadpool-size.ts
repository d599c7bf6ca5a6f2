// libuv's thread pool runs every worker's sharp calls (decode, resize, metadata) and is shared by the
// whole process, 4 threads unless UV_THREADPOOL_SIZE says otherwise; libuv reads it once, when the
// pool first starts. On a 16-core GPU box 16 photo workers would queue for those 4 threads, so the
// default becomes one thread per core (never below libuv's 4). Import this module first: it must
// run before anything uses the pool. A value the operator set is kept.
import os from 'node:os';

process.env.UV_THREADPOOL_SIZE ??= String(Math.max(4, os.availableParallelism()));
