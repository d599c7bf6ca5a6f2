// Waiting on a condition with a generous upper bound instead of sleeping a fixed time.

/** Poll async `check` every `intervalMs` until it returns a truthy value; reject after `deadlineMs`. */
export async function pollUntilAsync<T>(check: () => Promise<T | undefined | null | false>, what: string, deadlineMs = 30_000, intervalMs = 50): Promise<T> {
  const end = Date.now() + deadlineMs;
  for (;;) {
    const v = await check();
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out after ${deadlineMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}
