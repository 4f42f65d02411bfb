/**
 * `devices`: the device nodes a sandboxed policy host or simulator server needs (src/bridges/sandbox-devices.ts).
 * The sandbox binds exactly these and the driver files they need, and records them in the isolation line; nothing
 * else under /dev is there (bubblewrap's minimal /dev: null, zero, random, urandom, tty, shm, pts).
 */
import { z } from 'zod';

export const DeviceSchema = z
  .union([
    z
      .enum(['nvidia', 'dri'])
      .describe(
        'a GPU class: nvidia (/dev/nvidia[0-9]*, nvidiactl, nvidia-uvm*, nvidia-modeset, nvidia-caps) or dri (/dev/dri/*), as found on the host, with the driver files they need',
      ),
    z
      .string()
      .regex(/^\/[^\0]*$/, { error: 'must be nvidia, dri, or the absolute path of a device node' })
      .describe(
        'the absolute path of one GPU or accelerator character device (nvidia*, dri/renderD*, accel/accel*, kfd…), bound at the same path; a disk, a terminal or /dev/mem is refused',
      ),
  ])
  .describe('a device the sandboxed process may open');

export const DevicesSchema = z
  .array(DeviceSchema)
  .min(1)
  .max(16)
  .describe(
    'without endpoint: the devices the sandbox binds (e.g. [nvidia] for CUDA, [dri] for EGL on a DRM render node); none by default',
  );

export type DeviceRequest = z.infer<typeof DeviceSchema>;
