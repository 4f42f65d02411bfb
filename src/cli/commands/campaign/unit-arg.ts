/**
 * The UNIT argument of `imep campaign …`: a folder holding unit.json. A folder that holds a unit's other
 * records but no unit.json is refused as tampered (its header was removed or renamed); anything else is a
 * usage error. (A check on the unit's files, kept in the CLI where it began; src/evidence could own it.)
 */
import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import { ImepError } from '../../../core/index.js';

const exists = (path: string): Promise<boolean> =>
  stat(path).then(
    () => true,
    () => false,
  );

/** The records of a unit other than unit.json that `dir` holds. */
async function otherRecords(dir: string): Promise<string[]> {
  const records = ['seal.json', 'precommit.json', 'protocol.json', 'plan.json'];
  const present = await Promise.all(records.map(async (f) => ((await exists(join(dir, f))) ? f : null)));
  return present.filter((f): f is string => f !== null);
}

/** `dir` when it is an evidence unit; refuses it otherwise. */
export async function unitArg(dir: string): Promise<string> {
  if (await exists(join(dir, 'unit.json'))) return dir;
  const present = await otherRecords(dir);
  if (present.length > 0) {
    throw new ImepError(
      'E_UNIT_TAMPERED',
      `unit.json is missing, but the folder holds ${present.join(', ')} of an evidence unit`,
      {
        file: join(dir, 'unit.json'),
        hint: 'restore the unit from an intact copy',
      },
    );
  }
  throw new ImepError('E_USAGE', 'not an evidence unit (no unit.json)', {
    file: dir,
    hint: 'give a unit folder, e.g. campaigns/<protocol id>-<hash12>',
  });
}
