// A CI-sized bench:faults --faults fuzz-fetch: hostile image hosts on loopback (bad framing and headers, drips,
// stalls, resets, redirect chains), fetched by the image_url fetcher itself and then through one real
// server. Each download is exactly what the host framed or an error whose reason fits what it did,
// nothing outlasts the timeout, no connection is left open, the server answers a failed download
// with 400 failed_image_download and charges only removals. Seeded: a failure names lane and index.
import t from 'tap';
import { runFetchFuzz } from '../harness/fuzz-fetch-driver.js';

t.test('the fetcher: 10 s of hostile hosts from 8 lanes', async (t) => {
  const r = await runFetchFuzz({ seconds: 10, lanes: 8, seed: 20261126, service: false });
  t.same(r.failures, [], 'every check held');
  t.ok(r.scenarios >= 100, `scenarios fetched (${r.scenarios})`);
  t.ok(
    (r.outcomes.ok ?? 0) > 0 && (r.outcomes['error: Timed out after'] ?? 0) > 0,
    `downloads, refusals and timeouts among the outcomes (${JSON.stringify(r.outcomes)})`,
  );
});

t.test('the service: 15 s of image_url requests to hostile hosts from 6 lanes', async (t) => {
  const r = await runFetchFuzz({ seconds: 15, lanes: 6, seed: 20261126, service: true });
  t.same(r.failures, [], 'every check held');
  t.ok(r.scenarios >= 30, `requests answered or left (${r.scenarios})`);
  t.ok((r.outcomes['200'] ?? 0) > 0, `removals among the answers (${JSON.stringify(r.outcomes)})`);
  t.ok(
    Object.keys(r.outcomes).some((o) => o.startsWith('400 failed_image_download')),
    'failed downloads among the answers',
  );
  t.equal(r.credits?.ledgerDebit, r.credits?.fromHeaders, `the ledger moved by what the headers said (${r.credits?.fromHeaders})`);
});
