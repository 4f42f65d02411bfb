/**
 * Open environments one client (one ROUTER peer) may hold on a bridge server (PROTOCOL.md; the Python server has
 * the same number); a further `make` is E_TOO_MANY_HANDLES. IMEP's runner holds one per (task, batch slot) on each
 * server and refuses a run that would need more before anything is written (bridge-envs.ts checkHandlesPerServer).
 * Its own module so that the runner reads it without loading the wire codecs.
 */
export const MAX_HANDLES_PER_CLIENT = 1024;
