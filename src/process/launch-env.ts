// What bin/cutout adds to node's environment when it starts the CLI, for the programs that start
// `cutout` without it (the benches' servers, bench:compare's checkouts) and the Docker images:
// glibc's malloc backs its mmapped blocks with transparent huge pages, and has one arena, so that the
// heap a busy worker keeps is the one malloc_trim hands back when idle (docs/memory.md, "Huge pages"
// and "One arena"; native/src/memory.h). Read by glibc only when a process starts, so it cannot be set
// from inside. A value the caller set is kept.

export const LAUNCH_TUNABLES = 'glibc.malloc.hugetlb=1:glibc.malloc.arena_max=1';

/** `env` as bin/cutout passes it on to node. */
export function launchEnv(env: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  return env.GLIBC_TUNABLES === undefined ? { ...env, GLIBC_TUNABLES: LAUNCH_TUNABLES } : env;
}
