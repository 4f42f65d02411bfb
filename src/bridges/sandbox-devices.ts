/**
 * The devices a sandbox binds (issue 32 item 7): exactly those a protocol declares (`policy.devices`,
 * `simulator.devices`; src/protocol/schema-devices.ts), as found on this machine, and the driver files they need.
 *
 *   nvidia  /dev/nvidia[0-9]*, /dev/nvidiactl, /dev/nvidia-uvm, /dev/nvidia-uvm-tools, /dev/nvidia-modeset and
 *           /dev/nvidia-caps; the driver's ICD / vendor JSON folders under /etc (/etc/vulkan, /etc/glvnd,
 *           /etc/OpenCL, /etc/nvidia: the rest of /etc is not in the sandbox) and the folder of libcuda.so.1 where it
 *           lies outside /usr; sysfs (read-only) for device enumeration
 *   dri     /dev/dri (card*, renderD*); /etc/vulkan, /etc/glvnd, /etc/drirc; sysfs (libdrm enumerates through it)
 *   /path   one character or block device node, bound at the same path
 *
 * A declared class with no node on this machine, or a path that is not a device node, is refused when the sandbox is
 * made (E_SIM_UNAVAILABLE naming the field) — never a silent run without the device.
 */
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
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

function isDeviceNode(p: string): boolean {
  try {
    const s = statSync(p);
    return s.isCharacterDevice() || s.isBlockDevice();
  } catch {
    return false;
  }
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
      if (!isDeviceNode(d))
        throw unavailable(
          where,
          `${where} declares ${d}, which is not a device node on this machine`,
          'name an existing character or block device (ls -l shows c or b), or nvidia / dri',
        );
      nodes.push({ source: d, target: d });
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
