/**
 * The recorded rollout frames of a unit (traces/frames.jsonl, written by the frame recorder when the
 * protocol registers `frames`), read once against the seal's SHA-256 and parsed line by line; an empty
 * list when the protocol recorded none. A line that does not parse names the unit as tampered.
 */
import { ImepError } from '../core/index.js';
import { FramesLineSchema, readSealed, sealedSha256, type FramesLine, type VerifiedUnit } from '../evidence/index.js';

export const FRAMES_TRACE = 'traces/frames.jsonl';

export type RecordedEpisode = FramesLine;

export async function loadRecordedFrames(unit: VerifiedUnit): Promise<RecordedEpisode[]> {
  if (sealedSha256(unit, FRAMES_TRACE) === undefined) return [];
  const text = (await readSealed(unit, FRAMES_TRACE)).toString('utf8');
  const out: RecordedEpisode[] = [];
  text.split('\n').forEach((line, i) => {
    if (line === '') return;
    let parsed: unknown;
    try {
      parsed = JSON.parse(line);
    } catch {
      parsed = undefined;
    }
    const r = FramesLineSchema.safeParse(parsed);
    if (!r.success)
      throw new ImepError('E_UNIT_TAMPERED', `${FRAMES_TRACE} line ${i + 1} is not a frames line`, {
        file: FRAMES_TRACE,
        hint: 'run `imep campaign verify UNIT`',
      });
    out.push(r.data);
  });
  return out;
}
