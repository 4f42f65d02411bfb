/**
 * The devices a sandbox binds (issue 32 item 7): exactly those a protocol declares (`policy.devices`,
 * `simulator.devices`; src/runtime/devices-schema.ts), as found on this machine, and the driver files they need.
 *
 *   nvidia  /dev/nvidia[0-9]*, /dev/nvidiactl, /dev/nvidia-uvm, /dev/nvidia-uvm-tools, /dev/nvidia-modeset and
 *           /dev/nvidia-caps; the driver's ICD / vendor JSON folders under /etc (/etc/vulkan, /etc/glvnd,
 *           /etc/OpenCL, /etc/nvidia: the rest of /etc is not in the sandbox) and the folder of libcuda.so.1 where it
 *           lies outside /usr; sysfs (read-only) for device enumeration
 *   dri     /dev/dri (card*, renderD*); /etc/vulkan, /etc/glvnd, /etc/drirc; sysfs (libdrm enumerates through it)
 *   /path   one GPU / accelerator character device node, bound at the same path: its real path (symbolic links
 *           followed) must be named as one (ACCELERATOR_NODE: nvidia*, dri/card*, dri/renderD*, accel/accel*, kfd,
 *           neuron*, davinci*), and its numbers must not be a terminal's, memory's, a disk's or a misc device's
 *           (DENIED_MAJORS): a disk (/dev/sda, /dev/nvme0n1), a terminal (/dev/tty, /dev/pts/N, /dev/console),
 *           /dev/mem, /dev/kmsg, /dev/loop*, /dev/fuse or /dev/kvm is refused (E_PROTOCOL_INVALID naming the field)
 *
 * A declared class with no node on this machine, or a path that is not a device node, is refused when the sandbox is
 * made (E_SIM_UNAVAILABLE naming the field) — never a silent run without the device.
 */
import { existsSync, readdirSync, realpathSync, statSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { ImepError } from '../core/index.js';

/** A declared device: a GPU class or the absolute path of one node (protocol: DeviceRequest). */
export type DeviceName = 'nvidia' | 'dri' | (string & {});

/** A host path and where it appears inside. */
export interface DeviceMount {
  readonly source: string;
  readonly target: string;
}

export interface ResolvedDevices {
  /** Device nodes (and node folders such as /dev/dri), bound with device access. */
  readonly nodes: readonly DeviceMount[];
  /** Driver files and folders bound read-only at their own paths (ICD JSONs, libraries outside /usr, sysfs). */
  readonly driverFiles: readonly string[];
}

const NVIDIA_NODE = /^nvidia(\d+|ctl|-uvm|-uvm-tools|-modeset|-caps)$/;
const GPU_ETC: Readonly<Record<'nvidia' | 'dri', readonly string[]>> = {
  nvidia: ['/etc/vulkan', '/etc/glvnd', '/etc/OpenCL', '/etc/nvidia'],
  dri: ['/etc/vulkan', '/etc/glvnd', '/etc/drirc'],
};
const SYSFS = ['/sys/dev', '/sys/devices', '/sys/bus', '/sys/class', '/sys/module'];
/** Where an NVIDIA driver's user-space libraries may lie outside /usr (container toolkits, WSL). */
const NVIDIA_LIB_DIRS = ['/usr/local/nvidia/lib64', '/usr/local/nvidia/lib', '/usr/lib/wsl/lib', '/opt/nvidia/lib64'];

/**
 * The names of GPU / accelerator character devices (the last component of the real path; a dri / accel node with its
 * folder): NVIDIA (nvidia0…, nvidiactl, nvidia-uvm*, nvidia-modeset, nvidia-caps/nvidia-cap*), DRM (dri/card*,
 * dri/renderD*), the kernel's compute accelerators (accel/accel*), AMD's compute node (kfd), AWS Neuron (neuron*) and
 * Huawei Ascend (davinci*, davinci_manager, devmm_svm, hisi_hdc).
 */
export const ACCELERATOR_NODE =
  /(^|\/)(nvidia(\d+|ctl|-uvm|-uvm-tools|-modeset)|nvidia-caps\/nvidia-cap\d+|dri\/(card|renderD)\d+|accel\/accel\d+|kfd|neuron\d+|davinci(\d+|_manager)|devmm_svm|hisi_hdc)$/;

/**
 * Device numbers refused whatever the node is called (a node renamed to look like a GPU): memory (1: mem, kmem, port,
 * kmsg), terminals and consoles (4, 5, 7: tty*, console, ptmx, vcs; 136–143: pts), misc (10: fuse, kvm, loop-control,
 * uinput, tun…), input (13), SCSI generic (21: a disk by another door) and USB (180, 189).
 */
const DENIED_MAJORS = new Set([4, 5, 7, 10, 13, 21, 180, 189, 136, 137, 138, 139, 140, 141, 142, 143]);
const DENIED_MEMORY_MINORS = new Set([1, 2, 4, 11]); // major 1: mem, kmem, port, kmsg (null, zero, random are harmless)

// glibc's dev_t: major in bits 8–19 and 32–43, minor in bits 0–7 and 20–31 (arithmetic: rdev may pass 2^32)
const bits = (n: number, from: number, count: number): number => Math.floor(n / 2 ** from) % 2 ** count;
const majorOf = (rdev: number): number => bits(rdev, 8, 12) + bits(rdev, 32, 12) * 2 ** 12;
const minorOf = (rdev: number): number => bits(rdev, 0, 8) + bits(rdev, 20, 12) * 2 ** 8;

/** deviceRefusal's answer for a path that is no device node here (missing, a file, a folder). */
export const NOT_A_NODE = 'which is not a device node on this machine';

/** Why `path` (a declared device) may not be bound, or undefined when it is a GPU / accelerator character device. */
export function deviceRefusal(path: string): string | undefined {
  let real: string;
  let s: ReturnType<typeof statSync>;
  try {
    real = realpathSync.native(path);
    s = statSync(real);
  } catch {
    return NOT_A_NODE;
  }
  const shown = real === path ? '' : ` (${real})`;
  if (s.isBlockDevice()) return `which is a block device${shown} (a disk)`;
  if (!s.isCharacterDevice()) return NOT_A_NODE;
  const major = majorOf(s.rdev);
  const minor = minorOf(s.rdev);
  if (DENIED_MAJORS.has(major) || (major === 1 && DENIED_MEMORY_MINORS.has(minor)))
    return `which is character device ${major}:${minor}${shown}, a terminal, memory or misc device`;
  const named = `${basename(dirname(real))}/${basename(real)}`;
  if (!ACCELERATOR_NODE.test(named)) return `which${shown} is not a GPU or accelerator device`;
  return undefined;
}

/** A declared device that is no GPU or accelerator (E_PROTOCOL_INVALID, one line naming the field). */
export function refusedDevice(field: string, path: string, why: string, file?: string): ImepError {
  return new ImepError(
    'E_PROTOCOL_INVALID',
    `${field} declares ${path}, ${why}: only GPU or accelerator devices are bound`,
    {
      ...(file === undefined ? {} : { file }),
      field,
      hint: 'declare nvidia or dri, or the path of one GPU / accelerator node (nvidia*, dri/renderD*, accel/accel*, kfd)',
    },
  );
}

function unavailable(field: string, message: string, hint: string): ImepError {
  return new ImepError('E_SIM_UNAVAILABLE', message, { field, hint });
}

/**
 * The mounts for `devices` (field: e.g. "policy.devices", for messages). `devRoot` is where the host's device nodes
 * are looked up (/dev; a test points it at a folder of stand-in nodes): each appears inside under /dev.
 */
export function resolveDevices(
  devices: readonly DeviceName[],
  field: string,
  options: { readonly devRoot?: string } = {},
): ResolvedDevices {
  const devRoot = options.devRoot ?? '/dev';
  const nodes: DeviceMount[] = [];
  const driver = new Set<string>();
  devices.forEach((d, i) => {
    const where = `${field}[${i}]`;
    if (d === 'nvidia') {
      const names = existsSync(devRoot) ? readdirSync(devRoot).filter((n) => NVIDIA_NODE.test(n)) : [];
      if (!names.some((n) => /^nvidia\d+$/.test(n)))
        throw unavailable(
          where,
          `${where} declares nvidia, but this machine has no NVIDIA device node (${devRoot}/nvidia0…)`,
          'run on a machine with the NVIDIA driver loaded, or remove the device from the protocol',
        );
      for (const n of names.sort()) nodes.push({ source: join(devRoot, n), target: join('/dev', n) });
      for (const lib of NVIDIA_LIB_DIRS) if (existsSync(join(lib, 'libcuda.so.1'))) driver.add(lib);
    } else if (d === 'dri') {
      const dri = join(devRoot, 'dri');
      if (!existsSync(dri) || readdirSync(dri).length === 0)
        throw unavailable(
          where,
          `${where} declares dri, but this machine has no ${dri}`,
          'run on a machine with a DRM device, or remove the device from the protocol',
        );
      nodes.push({ source: dri, target: '/dev/dri' });
    } else {
      const why = deviceRefusal(d);
      if (why === NOT_A_NODE)
        throw unavailable(
          where,
          `${where} declares ${d}, ${why}`,
          'name an existing GPU or accelerator device node (ls -l shows c), or nvidia / dri',
        );
      if (why !== undefined) throw refusedDevice(where, d, why);
      // bound from its real path, the one that was checked
      nodes.push({ source: realpathSync.native(d), target: d });
    }
    const gpu = d === 'nvidia' ? 'nvidia' : d === 'dri' ? 'dri' : undefined;
    if (gpu !== undefined) for (const p of [...GPU_ETC[gpu], ...SYSFS]) if (existsSync(p)) driver.add(p);
  });
  const seen = new Set<string>();
  return {
    nodes: nodes.filter((m) => (seen.has(m.target) ? false : (seen.add(m.target), true))),
    driverFiles: [...driver].sort(),
  };
}
