/** What a row records of a failed try: its code and one outside-safe line (episode-loop.ts). */
import { isImepError, outsideText } from '../core/index.js';
import type { EpisodeStop } from '../runtime/index.js';
import type { FailureInfo } from './types.js';

/** The most a row's failure message keeps (a policy's or simulator's words may be in it). */
export const ROW_MESSAGE_MAX = 2048;

/**
 * The row's record of a failed try. Its message may carry a policy's or a simulator's own words (an exception's
 * text), and rows are sealed and reported: one line, controls and escape sequences removed, capped (outside-text.ts).
 */
export function failureOf(e: unknown): FailureInfo {
  if (isImepError(e)) return { code: e.code, message: outsideText(e.oneLine(), ROW_MESSAGE_MAX) };
  return { code: 'E_INTERNAL', message: outsideText(e instanceof Error ? e.message : String(e), ROW_MESSAGE_MAX) };
}

/** The failure an episode's stop means (null: it ended normally, done or at the cap). */
export function failureOfStop(stop: EpisodeStop): FailureInfo | null {
  switch (stop.kind) {
    case 'done':
    case 'cap':
      return null;
    case 'over-limit':
      return {
        code: 'E_SIM_UNAVAILABLE',
        message: `the environment did not end the episode within its ${stop.limit} steps`,
      };
    case 'failed':
      return failureOf(stop.error);
  }
}
