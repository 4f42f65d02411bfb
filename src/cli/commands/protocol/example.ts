/**
 * `imep protocol example [NAME] [--out FILE]`: the protocols shipped with imep (the package's protocols/*.yaml), listed
 * with their titles; with NAME, that protocol copied byte for byte to FILE (default NAME.yaml in the working folder)
 * for editing — an existing FILE is never overwritten (exit 2). The copy has the shipped protocol's hash until it is
 * edited; its `checkpoint.path` resolves as docs/install.md ("Where a protocol's paths resolve") says, and the line
 * printed names the checkpoint file it will use.
 */
import type { Command } from 'commander';
import { constants } from 'node:fs';
import { copyFile, readFile, readdir } from 'node:fs/promises';
import { basename, join, resolve } from 'node:path';
import { parse } from 'yaml';
import { ImepError } from '../../../core/index.js';
import { PACKAGE_ROOT, checkpointSource } from '../../../campaign/index.js';
import { loadProtocol } from '../../../protocol/index.js';

/** The folder of the shipped protocols (the package's, wherever imep is installed). */
export const SHIPPED_PROTOCOLS = join(PACKAGE_ROOT, 'protocols');

interface Shipped {
  readonly name: string;
  readonly file: string;
  readonly title: string;
}

/** The shipped protocols (protocols/*.yaml, not the suites or calibration subfolders), by name. */
export async function shippedProtocols(dir = SHIPPED_PROTOCOLS): Promise<Shipped[]> {
  const names = (await readdir(dir)).filter((f) => f.endsWith('.yaml')).sort();
  return Promise.all(
    names.map(async (f) => {
      const file = join(dir, f);
      const doc: unknown = parse(await readFile(file, 'utf8'));
      const title = typeof doc === 'object' && doc !== null && 'title' in doc ? String(doc.title) : '';
      return { name: basename(f, '.yaml'), file, title };
    }),
  );
}

async function list(): Promise<void> {
  const shipped = await shippedProtocols();
  const width = Math.max(...shipped.map((s) => s.name.length));
  process.stdout.write(`shipped protocols (${SHIPPED_PROTOCOLS}):\n`);
  for (const s of shipped) process.stdout.write(`  ${s.name.padEnd(width)}  ${s.title}\n`);
  process.stdout.write('copy one out for editing: imep protocol example NAME [--out FILE]\n');
}

async function copyOut(name: string, out: string | undefined): Promise<void> {
  const shipped = await shippedProtocols();
  const found = shipped.find((s) => s.name === name || `${s.name}.yaml` === name);
  if (found === undefined) {
    throw new ImepError('E_USAGE', `no shipped protocol is named ${name}`, {
      field: 'NAME',
      hint: `name one of: ${shipped.map((s) => s.name).join(', ')} (imep protocol example lists them)`,
    });
  }
  const target = out ?? `${found.name}.yaml`;
  try {
    await copyFile(found.file, target, constants.COPYFILE_EXCL);
  } catch (e) {
    const exists = (e as NodeJS.ErrnoException).code === 'EEXIST';
    throw new ImepError('E_USAGE', exists ? `${target} exists; it is not overwritten` : `cannot write ${target}`, {
      file: target,
      field: '--out',
      hint: exists ? 'name another file with --out FILE, or remove that one' : 'name a writable file with --out FILE',
      cause: e,
    });
  }
  const loaded = await loadProtocol(target);
  process.stdout.write(
    `wrote ${target}: ${found.name} (protocol ${loaded.protocol.id}, hash ${loaded.hash.slice(0, 12)})\n`,
  );
  const source = checkpointSource(loaded.protocol, {}, resolve(target));
  if (source !== null) process.stdout.write(`${source}\n`);
  process.stdout.write(`run it: imep campaign run ${target}\n`);
}

export function registerExample(group: Command): void {
  group
    .command('example')
    .description('list the protocols shipped with imep, or copy one out for editing (never overwrites)')
    .argument('[name]', 'the shipped protocol to copy (without NAME: list them)')
    .option('--out <file>', 'where to write the copy (default: NAME.yaml in the working folder)')
    .action(async (name: string | undefined, o: { out?: string }) => {
      if (name === undefined) {
        if (o.out !== undefined) {
          throw new ImepError('E_USAGE', '--out is given without NAME', {
            field: '--out',
            hint: 'name the shipped protocol to copy: imep protocol example NAME --out FILE',
          });
        }
        await list();
        return;
      }
      await copyOut(name, o.out);
    });
}
