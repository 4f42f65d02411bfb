/**
 * Declared devices (issue 32 item 7), on CPU with stand-in device nodes (root can mknod a character device in a
 * temporary folder; /dev/null's numbers, so it can be opened and written): a declared GPU class binds exactly its nodes
 * as found under the device root, each at /dev/<name> inside, which the sandboxed process can open, while an undeclared
 * node is not there; a declared class with no node, or a path that is no device node, is refused naming the field; the
 * isolation line and record list the devices. Before the fix no device was ever bound. A declared path is bound only
 * when it is a GPU / accelerator character device (named as one, its real path, its numbers no terminal's or memory's):
 * a block device (a disk), a terminal or /dev/mem is refused (review defect 2: before, any node was bound).
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { deviceRefusal, resolveDevices } from '../../src/bridges/sandbox-devices.js';
import { bubblewrapWorks, describeIsolation, sandboxed } from '../../src/bridges/sandbox.js';
import { sandboxSimulator } from '../../src/bridges/simulator-sandbox.js';
import { ImepError } from '../../src/core/errors.js';
import { ROOT } from '../campaign/helpers.js';

const isRoot = process.getuid?.() === 0;
const mknod = (p: string, kind = 'c', major = '1', minor = '3'): void => {
  const r = spawnSync('mknod', [p, kind, major, minor]);
  if (r.status !== 0) throw new Error(`mknod ${p}: ${r.stderr.toString()}`);
};

describe.runIf(isRoot)('declared devices, with stand-in nodes', () => {
  const dir = mkdtempSync(join(tmpdir(), 'imep-devices-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const dev = join(dir, 'dev');
  mkdirSync(join(dev, 'dri'), { recursive: true });
  for (const n of ['nvidia0', 'nvidiactl', 'nvidia-uvm', 'dri/renderD128', 'other0']) mknod(join(dev, n));
  writeFileSync(join(dev, 'nvidia-notes.txt'), 'not a node');
  // a declared path must be named as an accelerator node (accel/accel<N>): the stand-ins live in a folder of that name
  mkdirSync(join(dir, 'accel'));
  const loose = join(dir, 'accel', 'accel0');
  const undeclared = join(dir, 'accel', 'accel1');
  mknod(loose);
  mknod(undeclared);

  it('nvidia: exactly the NVIDIA nodes under the device root, each at /dev/<name>', () => {
    const r = resolveDevices(['nvidia'], 'policy.devices', { devRoot: dev });
    expect(r.nodes).toEqual([
      { source: join(dev, 'nvidia-uvm'), target: '/dev/nvidia-uvm' },
      { source: join(dev, 'nvidia0'), target: '/dev/nvidia0' },
      { source: join(dev, 'nvidiactl'), target: '/dev/nvidiactl' },
    ]);
    const dri = resolveDevices(['dri', loose], 'simulator.devices', { devRoot: dev });
    expect(dri.nodes).toEqual([
      { source: join(dev, 'dri'), target: '/dev/dri' },
      { source: loose, target: loose },
    ]);
  });

  it('refuses a class with no node here and a path that is no device node, naming the field', () => {
    const empty = join(dir, 'empty');
    mkdirSync(empty);
    const e1 = (() => {
      try {
        resolveDevices(['nvidia'], 'policy.devices', { devRoot: empty });
      } catch (e) {
        return e;
      }
    })();
    expect(e1).toBeInstanceOf(ImepError);
    expect((e1 as ImepError).field).toBe('policy.devices[0]');
    expect((e1 as ImepError).message).toMatch(/declares nvidia, but this machine has no NVIDIA device node/);
    expect(() => resolveDevices([join(dev, 'nvidia-notes.txt')], 'simulator.devices')).toThrow(/not a device node/);
  });

  it('refuses a disk, a terminal, memory and a node that is no accelerator, naming the field (also through a link)', () => {
    const odd = join(dir, 'odd');
    mkdirSync(odd);
    mknod(join(odd, 'sda'), 'b', '8', '0'); // a disk
    mknod(join(odd, 'nvidia9'), 'b', '8', '0'); // a disk named like a GPU
    mknod(join(odd, 'tty'), 'c', '5', '0'); // the controlling terminal
    mknod(join(odd, 'nvidia8'), 'c', '136', '3'); // a pseudo-terminal named like a GPU
    mknod(join(odd, 'renderD128'), 'c', '1', '1'); // /dev/mem's numbers
    mknod(join(odd, 'null'), 'c', '1', '3'); // harmless numbers, but no accelerator
    symlinkSync(join(odd, 'sda'), join(odd, 'nvidia7'));
    const refusal = (p: string): ImepError => {
      try {
        resolveDevices(['nvidia', p], 'policy.devices', { devRoot: dev });
      } catch (e) {
        return e as ImepError;
      }
      throw new Error(`${p} was bound`);
    };
    for (const [name, why] of [
      ['sda', /which is a block device \(a disk\)/],
      ['nvidia9', /which is a block device/],
      ['nvidia7', /which is a block device \(.*odd\/sda\) \(a disk\)/],
      ['tty', /which is character device 5:0, a terminal, memory or misc device/],
      ['nvidia8', /character device 136:3/],
      ['renderD128', /character device 1:1/],
      ['null', /is not a GPU or accelerator device/],
    ] as const) {
      const e = refusal(join(odd, name));
      expect(e.code).toBe('E_PROTOCOL_INVALID');
      expect(e.field).toBe('policy.devices[1]');
      expect(e.message).toMatch(why);
      expect(e.message).toMatch(/: only GPU or accelerator devices are bound$/);
    }
    // the host's own: a terminal and memory are refused by their numbers whatever they are called
    if (existsSync('/dev/tty')) expect(deviceRefusal('/dev/tty')).toMatch(/character device 5:0/);
    if (existsSync('/dev/mem')) expect(deviceRefusal('/dev/mem')).toMatch(/character device 1:1/);
    expect(deviceRefusal(loose)).toBeUndefined();
  });

  it.runIf(bubblewrapWorks().ok)(
    'inside: the declared nodes open, undeclared ones are absent; the isolation line lists the devices',
    () => {
      const script = [
        'import os',
        "for p in ['/dev/nvidia0', '/dev/nvidiactl', " + JSON.stringify(loose) + ']:',
        "    open(p, 'wb').write(b'x')",
        "print('opened')",
        'for p in ["/dev/other0", "/dev/nvidia1", ' + JSON.stringify(undeclared) + ']:',
        "    print('present' if os.path.exists(p) else 'absent', p)",
      ].join('\n');
      const { command, isolation } = sandboxed(
        { file: '/usr/bin/python3', args: ['-c', script], label: 'probe' },
        {
          readOnly: [],
          writable: [],
          bridgePackage: join(ROOT, 'sim-bridge/imep_sim_bridge'),
          devices: { names: ['nvidia', loose], field: 'policy.devices', devRoot: dev },
        },
      );
      const r = spawnSync(command.file, [...command.args], { input: command.input, encoding: 'utf8', timeout: 20_000 });
      expect(r.stderr).toBe('');
      expect(r.stdout.trim().split('\n')).toEqual([
        'opened',
        'absent /dev/other0',
        'absent /dev/nvidia1',
        `absent ${undeclared}`,
      ]);
      expect(isolation.mode === 'bubblewrap' && isolation.devices).toEqual([
        '/dev/nvidia-uvm',
        '/dev/nvidia0',
        '/dev/nvidiactl',
        loose,
      ]);
      expect(describeIsolation(isolation)).toMatch(
        /; devices \/dev\/nvidia-uvm, \/dev\/nvidia0, \/dev\/nvidiactl, .*accel\/accel0\)$/,
      );
    },
  );

  it.runIf(bubblewrapWorks().ok)("a simulator server's declared devices are bound and recorded the same way", () => {
    const { command, isolation } = sandboxSimulator(
      { file: '/usr/bin/python3', args: ['-m', 'imep_sim_bridge', 'serve'], label: 'sim-bridge' },
      'ipc:///tmp/x/bridge.sock',
      { bridgePackage: join(ROOT, 'sim-bridge/imep_sim_bridge'), devices: [loose] },
    );
    expect(isolation.mode === 'bubblewrap' && isolation.devices).toEqual([loose]);
    expect((command.input ?? '').split('\0').join(' ')).toContain(`--dev-bind ${loose} ${loose}`);
  });
});
