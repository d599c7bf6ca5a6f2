// The addon loads in worker threads, every worker shares the process's one model, and workers exit cleanly.
import t from 'tap';
import { Worker } from 'node:worker_threads';
import { modelEntry } from '../../src/model/manifest.js';
import { ADDON_PATH, sessionOptionsFor } from '../../src/native/binding.js';

const model = modelEntry();
const options = sessionOptionsFor(model.entry, 1);

// Each worker opens a session, reports the process-wide model count and its RSS, then waits to be told to exit.
const source = `
const { parentPort, workerData } = require('node:worker_threads');
const b = require(workerData.addon);
const s = new b.Session(workerData.model, workerData.options);
parentPort.postMessage({ loaded: b.loadedModels(), rss: process.memoryUsage().rss });
parentPort.once('message', () => { s.close(); parentPort.postMessage({ loaded: b.loadedModels() }); process.exit(0); });
`;

function start(): Promise<{ worker: Worker; first: { loaded: number; rss: number } }> {
  const worker = new Worker(source, { eval: true, workerData: { addon: ADDON_PATH, model: model.path, options } });
  return new Promise((resolve, reject) => {
    worker.once('message', (first) => resolve({ worker, first }));
    worker.once('error', reject);
  });
}

t.test('two workers, one model', async (t) => {
  const a = await start();
  t.equal(a.first.loaded, 1, 'first worker loaded the model');
  const b = await start();
  t.equal(b.first.loaded, 1, 'second worker reuses it: still one model in the process');
  // The second session adds its tensors (16 MB) and a thread, not another ~176 MB model.
  const added = b.first.rss - a.first.rss;
  t.ok(added < 120 * 1024 * 1024, `second worker added ${(added / 1048576).toFixed(0)} MB RSS`);

  const exitA = new Promise((r) => a.worker.once('exit', r));
  const lastA = new Promise<{ loaded: number }>((r) => a.worker.once('message', r));
  a.worker.postMessage('close');
  t.equal((await lastA).loaded, 1, 'model stays while the other worker holds it');
  t.equal(await exitA, 0, 'worker exited cleanly');

  const exitB = new Promise((r) => b.worker.once('exit', r));
  const lastB = new Promise<{ loaded: number }>((r) => b.worker.once('message', r));
  b.worker.postMessage('close');
  t.equal((await lastB).loaded, 0, 'released with the last worker');
  t.equal(await exitB, 0);
});
