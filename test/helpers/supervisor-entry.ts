// `node supervisor-entry.js <count>`: runSupervisor over test/helpers/supervisor-child.js with small
// back-off figures (10 ms doubling to at most 40 ms; a process is given up after 3 crashes in 60 s).
import { runSupervisor } from '../../src/cli/supervisor.js';

runSupervisor({
  count: Number(process.argv[2] ?? 2),
  childArgs: [],
  entry: new URL('./supervisor-child.js', import.meta.url),
  restartDelayMs: 10,
  maxRestartDelayMs: 40,
  maxCrashes: 3,
  crashWindowMs: 60_000,
}).then((code) => {
  process.stdout.write(`supervisor exit ${code}\n`);
  process.exitCode = code;
});
