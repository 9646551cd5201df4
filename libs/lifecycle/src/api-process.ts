/*
 * How the API's node process is started (docs/decisions.md, "Round trips,
 * pass-through reads and memory"). V8 sizes the young generation from the
 * machine's memory (two 64 MiB semi-spaces on a 24 GB host) and keeps the heap
 * pages it frees resident, so the API's RSS is its heap's high-water mark;
 * glibc, once a large buffer is freed, raises its mmap threshold and keeps
 * later ones in a heap it rarely gives back. Both are read at process start,
 * not settable from inside, so whatever starts the API passes them: npm start
 * and the benchmarks from here; `npm run start:api`, the Dockerfile and
 * docker-compose.yml spell the same values (api-process.spec.ts).
 */

/** 16 MiB semi-spaces (V8's fixed default before it scaled them with memory): request garbage dies young in them. */
export const API_NODE_ARGS: readonly string[] = ['--max-semi-space-size=16'];

/**
 * Allocations of 96 KiB and more mapped on their own and returned when freed: a
 * 100 KB tool result's body is, Node's 64 KiB socket reads stay in the heap
 * (a mapping each would be two system calls per read). Setting it also stops
 * glibc from raising the threshold.
 */
export const API_ENV: Readonly<Record<string, string>> = { MALLOC_MMAP_THRESHOLD_: '98304' };
