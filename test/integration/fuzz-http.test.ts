// A CI-sized fuzz (bench:faults --faults fuzz-http's driver): 20 s of hostile requests from 4 lanes against one real
// server process, then 10 s over HTTPS (--tls). Every answer is well formed (no 5xx but 503, errors are JSON with title and code,
// 200s are images with their headers), no connection is closed unanswered except where uWS itself
// does so (docs/http.md), nothing hangs, the ledger debited exactly what the headers charged, and the
// server is alive and healthy afterwards. The generator is seeded: a failure names its lane and index.
import t from 'tap';
import { runFuzz } from '../harness/fuzz-driver.js';

t.test('20 s of hostile requests from 4 lanes', async (t) => {
  const r = await runFuzz({ seconds: 20, lanes: 4, seed: 20261126 });
  t.same(r.failures, [], 'every check held');
  t.ok(r.sent >= 100, `requests sent (${r.sent})`);
  t.ok((r.statuses[400] ?? 0) > 0 && (r.statuses[200] ?? 0) > 0, `both refusals and removals among the answers (${JSON.stringify(r.statuses)})`);
  t.equal(r.credits.ledgerDebit, r.credits.fromHeaders, `the ledger moved by what the headers said (${r.credits.fromHeaders})`);
});

t.test('10 s of the same over TLS', async (t) => {
  const r = await runFuzz({ seconds: 10, lanes: 4, seed: 20261127, tls: true });
  t.same(r.failures, [], 'every check held');
  t.ok(r.sent >= 20, `requests sent (${r.sent})`);
  t.equal(r.credits.ledgerDebit, r.credits.fromHeaders, `the ledger moved by what the headers said (${r.credits.fromHeaders})`);
});
