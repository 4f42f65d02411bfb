/**
 * The rule of what a sandbox bind may not expose (src/bridges/sandbox-exposure.ts): the campaigns folder, the key store,
 * IMEP's state and HOME's private folders are refused whether a bind is them, contains them or lies inside them (a
 * symbolic link is no way round); HOME itself is never bound, but an ordinary subfolder of it (a venv, a module) is.
 * sandboxed() applies it again when it starts a process (a resumed run: no precommit in between).
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { findExposure, keyStoreDir, protectedZones, realish } from '../../src/bridges/sandbox-exposure.js';
import { keysDir } from '../../src/signing/key-store.js';
import { bubblewrapWorks, sandboxed } from '../../src/bridges/sandbox.js';
import { ROOT } from '../campaign/helpers.js';

describe('what no sandbox bind may expose', () => {
  const dir = mkdtempSync(join(tmpdir(), 'imep-exposure-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const home = join(dir, 'home');
  const campaigns = join(dir, 'work', 'campaigns');
  for (const d of [join(home, '.ssh'), join(home, 'venvs', 'sim'), join(home, 'code'), campaigns, join(dir, 'state')])
    mkdirSync(d, { recursive: true });
  symlinkSync(join(dir, 'work'), join(home, 'code', 'work-link'));
  const env = { HOME: home, IMEP_STATE_DIR: join(dir, 'state'), IMEP_PYTHON: '/usr/bin/python3' };
  const zones = protectedZones({ campaignsDir: campaigns, env });
  const what = (path: string): string | undefined => findExposure([{ path, field: 'f' }], zones)?.zone.what;

  it('refuses a bind that is, contains or lies inside a protected folder', () => {
    expect(what(campaigns)).toMatch(/^the campaigns folder/);
    expect(what(join(dir, 'work'))).toMatch(/^the campaigns folder/); // contains it
    expect(what(join(campaigns, 'unit', 'rows'))).toMatch(/^the campaigns folder/); // inside it
    expect(what(join(home, 'code', 'work-link'))).toMatch(/^the campaigns folder/); // through a symbolic link
    expect(what(join(home, '.imep', 'keys', 'x'))).toMatch(/^the key store/);
    expect(what(join(home, '.ssh'))).toBe('a private folder of HOME (~/.ssh)');
    expect(what(join(dir, 'state', 'sub'))).toBe("IMEP's state (IMEP_STATE_DIR)");
    expect(what(home)).toMatch(/^the key store/); // HOME holds ~/.imep/keys: the first zone it exposes is named
    expect(what('/')).toMatch(/^the campaigns folder/);
  });

  it('allows an ordinary subfolder of HOME, the system folders and IMEP_PYTHON', () => {
    expect(what(join(home, 'venvs', 'sim'))).toBeUndefined();
    expect(what(join(home, 'code'))).toBeUndefined();
    expect(what('/usr')).toBeUndefined();
    expect(zones.some((z) => z.what.includes('IMEP_PYTHON'))).toBe(false);
  });

  it.runIf(bubblewrapWorks().ok)(
    'sandboxed() refuses such a bind when it starts a process (no precommit on a resumed run)',
    () => {
      const start = () =>
        sandboxed(
          { file: '/usr/bin/python3', args: [], label: 'policy host' },
          {
            readOnly: [{ path: join(dir, 'work'), field: 'policy.pythonPath[0]' }],
            writable: [],
            bridgePackage: join(ROOT, 'sim-bridge/imep_sim_bridge'),
            protect: zones,
            who: 'policy host',
          },
          { ...process.env, IMEP_SANDBOX: 'auto' },
        );
      expect(start).toThrow(/would be bound into the sandboxed policy host, exposing the campaigns folder/);
    },
  );
});

/**
 * A `..` after a symbolic link (review defect 1): the kernel follows the link and goes up from where it lands, so
 * `mods/link/..` with `link -> <key store>/sub` is the key store. Before the fix realish() removed the `..` as text
 * (giving `mods`), the bind was let through, and bwrap was handed `mods/link/..` as its source: the key file inside.
 */
describe('a `..` through a symbolic link', () => {
  const dir = mkdtempSync(join(tmpdir(), 'imep-dotdot-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const home = join(dir, 'home');
  const keys = join(home, '.imep', 'keys');
  const campaigns = join(dir, 'project', 'campaigns');
  const mods = join(dir, 'project', 'mods');
  for (const d of [join(keys, 'sub'), join(campaigns, 'unit-1', 'rows'), mods, join(dir, 'lib', 'sub')])
    mkdirSync(d, { recursive: true });
  writeFileSync(join(keys, 'operator.key'), 'private');
  symlinkSync(join(keys, 'sub'), join(mods, 'link'));
  symlinkSync(join(campaigns, 'unit-1', 'rows'), join(mods, 'clink'));
  symlinkSync(join(dir, 'lib', 'sub'), join(mods, 'benign'));
  const env = { HOME: home, IMEP_PYTHON: '/usr/bin/python3' };
  const zones = protectedZones({ campaignsDir: campaigns, env });
  const what = (path: string): string | undefined => findExposure([{ path, field: 'f' }], zones)?.zone.what;

  it('realish() follows the link before going up, as the kernel does', () => {
    expect(realish(`${mods}/link/..`)).toBe(keys);
    expect(realish(`${mods}/link/../operator.key`)).toBe(join(keys, 'operator.key'));
    expect(realish(`${mods}/clink/..`)).toBe(join(campaigns, 'unit-1'));
    // components that do not exist are resolved as text, after the existing ones by their real paths
    expect(realish(`${mods}/link/../nothing/x/..`)).toBe(join(keys, 'nothing'));
    expect(realish(`${mods}/missing/../benign`)).toBe(join(dir, 'lib', 'sub'));
  });

  it('findExposure() refuses it: into the key store and into a unit of the campaigns folder', () => {
    expect(what(`${mods}/link/..`)).toMatch(/^the key store/);
    expect(what(`${mods}/clink/..`)).toMatch(/^the campaigns folder/);
    expect(what(`${mods}/benign/..`)).toBeUndefined();
  });

  it.runIf(bubblewrapWorks().ok)('sandboxed() refuses it at start, and binds the real path of a harmless one', () => {
    const request = (path: string) => ({
      readOnly: [{ path, field: 'policy.pythonPath[0]', inside: '/imep/policy/0' }],
      writable: [],
      bridgePackage: join(ROOT, 'sim-bridge/imep_sim_bridge'),
      protect: zones,
      who: 'policy host',
    });
    const start = (path: string) =>
      sandboxed({ file: '/usr/bin/python3', args: [], label: 'policy host' }, request(path), {
        ...process.env,
        IMEP_SANDBOX: 'auto',
      });
    expect(() => start(`${mods}/link/..`)).toThrow(
      /link\/\.\. would be bound into the sandboxed policy host, exposing the key store/,
    );
    expect(() => start(`${mods}/clink/..`)).toThrow(/exposing the campaigns folder/);
    // the source bwrap is given is the real path that was checked, never the path as written
    const { command } = start(`${mods}/benign/..`);
    const options = (command.input ?? '').split('\0').join(' ');
    expect(options).toContain(`--ro-bind ${join(dir, 'lib')} /imep/policy/0`);
    expect(options).not.toContain('/..');
  });

  it.runIf(bubblewrapWorks().ok)('inside, the harmless one shows the link target’s parent, not the key file', () => {
    const { command } = sandboxed(
      {
        file: '/usr/bin/python3',
        args: ['-c', 'import os; print(sorted(os.listdir("/imep/policy/0")))'],
        label: 'probe',
      },
      {
        readOnly: [{ path: `${mods}/benign/..`, field: 'policy.pythonPath[0]', inside: '/imep/policy/0' }],
        writable: [],
        bridgePackage: join(ROOT, 'sim-bridge/imep_sim_bridge'),
        protect: zones,
      },
      { ...process.env, IMEP_SANDBOX: 'auto' },
    );
    const r = spawnSync(command.file, [...command.args], { input: command.input, encoding: 'utf8', timeout: 20_000 });
    expect(r.stdout.trim()).toBe("['sub']");
  });
});

/**
 * A relative IMEP_KEYS_DIR (review defect 3): the key store takes it from the working directory, so the sandbox
 * protects it there. Before the fix protectedZones() skipped every value that was not absolute.
 */
describe('the key store where key-store.ts finds it', () => {
  const dir = mkdtempSync(join(tmpdir(), 'imep-relkeys-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('keyStoreDir() is keysDir() as a path (the two rules agree)', () => {
    for (const env of [{}, { IMEP_KEYS_DIR: '/x/y' }, { IMEP_KEYS_DIR: 'rel/keys' }, { IMEP_KEYS_DIR: '  ' }])
      expect(keyStoreDir(env)).toBe(resolve(keysDir(env)));
  });

  it('a relative IMEP_KEYS_DIR is protected from the working directory', () => {
    const cwd = process.cwd();
    mkdirSync(join(dir, 'state', 'keys'), { recursive: true });
    process.chdir(dir);
    try {
      const zones = protectedZones({ env: { HOME: join(dir, 'home'), IMEP_KEYS_DIR: 'state/keys' } });
      expect(findExposure([{ path: join(dir, 'state'), field: 'f' }], zones)?.zone.what).toBe(
        'the key store (IMEP_KEYS_DIR)',
      );
      expect(findExposure([{ path: join(dir, 'state', 'keys', 'sub'), field: 'f' }], zones)?.zone.what).toBe(
        'the key store (IMEP_KEYS_DIR)',
      );
      expect(findExposure([{ path: join(dir, 'other'), field: 'f' }], zones)).toBeUndefined();
    } finally {
      process.chdir(cwd);
    }
  });
});
