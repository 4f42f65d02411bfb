/**
 * `limits`: the resource limits IMEP starts a policy host or a simulator server under (src/bridges/resource-limits.ts
 * enforces them with the OS: rlimits via util-linux `prlimit`, and a cgroup where one is writable). Every field is
 * optional: a missing one takes the kind's default (policy host or simulator server), and the run record says which
 * limits were in force and how each was enforced. A host or server someone else started (`endpoint`) takes none.
 */
import { z } from 'zod';

export const HostLimitsSchema = z
  .strictObject({
    memoryMiB: z
      .number()
      .int()
      .min(64)
      .optional()
      .describe(
        'memory of each process (RLIMIT_DATA: private writable memory, MiB) and, where a cgroup with the memory controller is writable, of the whole host (memory.max); default 16384 for a policy host, 32768 for a simulator server',
      ),
    processes: z
      .number()
      .int()
      .min(8)
      .optional()
      .describe(
        'processes and threads the host may run at once (a cgroup pids.max where writable; RLIMIT_NPROC inside the sandbox for a non-root user); default 512 for a policy host, 4096 for a simulator server',
      ),
    cpuSeconds: z
      .number()
      .int()
      .min(1)
      .optional()
      .describe(
        'CPU time of each process, all its threads together (RLIMIT_CPU, s); default 604800 (7 days) for a policy host, 2592000 (30 days) for a simulator server',
      ),
    callDeadlineS: z
      .number()
      .positive()
      .max(86_400)
      .optional()
      .describe(
        'the deadline of one call (policy.reset / policy.infer; a simulator step or reset), s: past it the host is killed (its whole process group) and restarted, and the episode is an execution failure; default 60 for a policy host, 30 per step and 60 per reset for a simulator server',
      ),
  })
  .describe('resource limits of a host IMEP starts: { memoryMiB?, processes?, cpuSeconds?, callDeadlineS? }');

export type HostLimitsConfig = z.infer<typeof HostLimitsSchema>;
