/**
 * What a bridged simulator reported about the stack it drives (hello.environment[adapter], sim-bridge/PROTOCOL.md:
 * packages and versions, the renderer it chose), as a run session records it (`run.json` sessions[].
 * simulatorEnvironment) and the report's provenance shows it. The server's map is kept as JSON values only (a value
 * JSON cannot hold — an ndarray, NaN — becomes a string saying so), so the record stays canonical JSON. The
 * report's line for it: src/report/simulator-environment-text.ts.
 */
import { z } from 'zod';

export type Json = string | number | boolean | null | Json[] | { [k: string]: Json };

const JsonSchema: z.ZodType<Json> = z.lazy(() =>
  z.union([
    z.string(),
    z.number().finite(),
    z.boolean(),
    z.null(),
    z.array(JsonSchema),
    z.record(z.string(), JsonSchema),
  ]),
);

export const SimulatorEnvironmentSchema = z.object({
  /** The sim-bridge adapter that reported it (e.g. libero, mikasa). */
  adapter: z.string().min(1),
  /** Its hello.environment[adapter] map, JSON values only. */
  reported: z.record(z.string(), JsonSchema),
});
export type SimulatorEnvironment = z.infer<typeof SimulatorEnvironmentSchema>;

function asJson(v: unknown): Json {
  if (v === null || typeof v === 'string' || typeof v === 'boolean') return v;
  if (typeof v === 'number') return Number.isFinite(v) ? v : `not JSON: ${String(v)}`;
  if (typeof v === 'bigint') return v.toString();
  if (Array.isArray(v)) return v.map(asJson);
  if (typeof v === 'object' && v !== undefined && Object.getPrototypeOf(v) === Object.prototype) {
    return Object.fromEntries(Object.entries(v as Record<string, unknown>).map(([k, x]) => [k, asJson(x)]));
  }
  return `not JSON: ${typeof v === 'object' ? ((v as object).constructor?.name ?? 'object') : typeof v}`;
}

/** The record of what `adapter` reported (hello.environment[adapter]), or undefined when it reported nothing. */
export function simulatorEnvironmentOf(
  adapter: string,
  reported: Readonly<Record<string, unknown>> | null | undefined,
): SimulatorEnvironment | undefined {
  if (reported === null || reported === undefined) return undefined;
  return { adapter, reported: asJson(reported) as Record<string, Json> };
}
