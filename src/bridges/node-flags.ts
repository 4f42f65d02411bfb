/**
 * V8 heap flags of the node processes that carry bridge traffic.
 *
 * Every frame a process receives over ZeroMQ (and every reply frame a server writes) is memory outside
 * V8's heap that V8 counts against its old-generation limit until a GC frees it. V8's small initial
 * limit (about 27 MB here) then starts a full mark-compact every 60–150 frames of 49 kB, which costs a
 * client more CPU per step than the rest of the round trip (bench/bridge-roundtrip.ts measures both).
 * A larger initial old space moves those collections hundreds of frames apart; it only raises the limit
 * at which V8 starts collecting, not the heap's maximum.
 *
 * - `CLIENT_NODE_FLAGS`: the `imep` CLI (its `#!` line, which test/bridges/node-flags.test.ts checks
 *   against this list) and the SLURM shards it launches (`src/cluster/launcher.ts`).
 * - `LITE_SERVER_NODE_FLAGS`: the `imep sim serve lite` processes IMEP starts (`liteServerCommand`).
 */
export const CLIENT_NODE_FLAGS: readonly string[] = Object.freeze(['--initial-old-space-size=128']);
export const LITE_SERVER_NODE_FLAGS: readonly string[] = Object.freeze(['--initial-old-space-size=64']);
