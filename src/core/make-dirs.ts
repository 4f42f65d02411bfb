import { mkdir, stat } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';

/**
 * `mkdir -p` that always ends: Node's `mkdir(dir, { recursive: true })` loops forever where the kernel answers
 * ENOENT for a folder whose parent exists (e.g. under /proc), so a bad `--campaigns-dir /proc/x` or
 * `--out /proc/x` hung. This walks up to the nearest existing ancestor once, then creates each missing folder
 * with a plain mkdir: every step is one system call, and the first refusal is thrown (with its errno code) —
 * callers wrap it into one line naming the folder.
 */
export async function makeDirs(dir: string, mode?: number): Promise<void> {
  const missing: string[] = [];
  let d = resolve(dir);
  for (;;) {
    const st = await stat(d).catch((e: unknown) => {
      if ((e as { code?: string }).code === 'ENOENT') return null;
      throw e;
    });
    if (st !== null) {
      if (!st.isDirectory()) throw Object.assign(new Error(`${d} is not a directory`), { code: 'ENOTDIR', path: d });
      break;
    }
    missing.push(d);
    const up = dirname(d);
    if (up === d) break;
    d = up;
  }
  for (const m of missing.reverse()) {
    try {
      await mkdir(m, mode === undefined ? undefined : { mode });
    } catch (e) {
      if (
        (e as { code?: string }).code === 'EEXIST' &&
        (await stat(m).then(
          (s) => s.isDirectory(),
          () => false,
        ))
      )
        continue;
      throw e;
    }
  }
}
