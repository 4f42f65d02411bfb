/**
 * The rule of what a sandbox bind may not expose (src/bridges/sandbox-exposure.ts): the campaigns folder, the key store,
 * IMEP's state and HOME's private folders are refused whether a bind is them, contains them or lies inside them (a
 * symbolic link is no way round); HOME itself is never bound, but an ordinary subfolder of it (a venv, a module) is.
 * sandboxed() applies it again when it starts a process (a resumed run: no precommit in between).
 */
import { mkdirSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { findExposure, protectedZones } from '../../src/bridges/sandbox-exposure.js';
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
