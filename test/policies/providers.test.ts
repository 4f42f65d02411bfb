import { describe, expect, it } from 'vitest';
import { isImepError } from '../../src/core/errors.js';
import {
  onnxRuntimeProbe,
  selectProvider,
  type ExecutionProvider,
  type ProviderProbe,
} from '../../src/policies/providers.js';

const probe = (available: Partial<Record<ExecutionProvider, boolean>>): ProviderProbe => ({
  check: (p) =>
    (available[p] ?? false) ? { available: true } : { available: false, reason: `${p} not installed (test probe)` },
});

async function tried(
  config: Parameters<typeof selectProvider>[0],
  pr: ProviderProbe,
  env: Record<string, string | undefined> = {},
  failOn: ExecutionProvider[] = [],
) {
  const attempts: ExecutionProvider[] = [];
  const choice = await selectProvider(
    config,
    pr,
    async (p) => {
      attempts.push(p);
      if (failOn.includes(p)) throw new Error(`cannot create a ${p} session\nsecond line`);
      return `session-on-${p}`;
    },
    env,
  );
  return { choice, attempts };
}

describe('execution-provider selection', () => {
  it('defaults to cuda then cpu and uses cuda when it is available', async () => {
    const { choice, attempts } = await tried({}, probe({ cuda: true, cpu: true }));
    expect(choice.requested).toEqual(['cuda', 'cpu']);
    expect(choice.ran).toBe('cuda');
    expect(choice.value).toBe('session-on-cuda');
    expect(attempts).toEqual(['cuda']);
  });

  it('falls back to cpu with a recorded note when CUDA is requested but unavailable', async () => {
    const { choice, attempts } = await tried({}, probe({ cpu: true }));
    expect(choice.ran).toBe('cpu');
    expect(attempts).toEqual(['cpu']);
    expect(choice.notes.join(' | ')).toMatch(
      /ran on cpu after: cuda requested but unavailable \(cuda not installed \(test probe\)\)/,
    );
  });

  it('falls back when the probe says yes but the cuda session cannot be created', async () => {
    const { choice, attempts } = await tried({}, probe({ cuda: true, cpu: true }), {}, ['cuda']);
    expect(attempts).toEqual(['cuda', 'cpu']);
    expect(choice.ran).toBe('cpu');
    expect(choice.notes.join(' | ')).toContain('session creation failed: cannot create a cuda session');
  });

  it('is a hard error, naming runtime.require, when the configuration requires CUDA and it is missing', async () => {
    const err = await tried({ require: 'cuda' }, probe({ cpu: true })).catch((e: unknown) => e);
    expect(isImepError(err)).toBe(true);
    if (!isImepError(err)) return;
    expect(err.code).toBe('E_USAGE');
    expect(err.field).toBe('runtime.require');
    expect(err.oneLine()).toMatch(
      /^runtime\.require: execution provider cuda is required but cannot run: cuda not installed/,
    );
    expect(err.oneLine()).not.toContain('\n');
  });

  it('is a hard error when CUDA is required and its session creation fails', async () => {
    const err = await tried({ require: 'cuda' }, probe({ cuda: true, cpu: true }), {}, ['cuda']).catch(
      (e: unknown) => e,
    );
    expect(isImepError(err) && err.field === 'runtime.require').toBe(true);
  });

  it('records CUDA_VISIBLE_DEVICES and treats an empty value or -1 as no GPU', async () => {
    const a = await tried({}, probe({ cuda: true, cpu: true }), { CUDA_VISIBLE_DEVICES: '1' });
    expect(a.choice.ran).toBe('cuda');
    expect(a.choice.cudaVisibleDevices).toBe('1');
    expect(a.choice.notes).toContain('CUDA_VISIBLE_DEVICES="1"');
    for (const hidden of ['', '-1']) {
      const b = await tried({}, probe({ cuda: true, cpu: true }), { CUDA_VISIBLE_DEVICES: hidden });
      expect(b.choice.ran).toBe('cpu');
      expect(b.choice.notes.join(' | ')).toContain('hides every GPU');
    }
    const c = await tried({}, probe({ cpu: true }), {});
    expect(c.choice.cudaVisibleDevices).toBeNull();
  });

  it('honours a cpu-only configuration and refuses bad ones', async () => {
    const { choice, attempts } = await tried({ providers: ['cpu'] }, probe({ cuda: true, cpu: true }));
    expect(choice.ran).toBe('cpu');
    expect(attempts).toEqual(['cpu']);
    await expect(tried({ providers: [] }, probe({ cpu: true }))).rejects.toMatchObject({ field: 'runtime.providers' });
    await expect(tried({ providers: ['tpu' as ExecutionProvider] }, probe({ cpu: true }))).rejects.toMatchObject({
      field: 'runtime.providers[0]',
    });
    await expect(tried({ providers: ['cpu'], require: 'cuda' }, probe({ cpu: true }))).rejects.toMatchObject({
      field: 'runtime.require',
    });
  });

  it('the default onnxruntime-node probe: cpu always, cuda only with its provider library installed', () => {
    const listed = [
      { name: 'cpu', bundled: true },
      { name: 'cuda', bundled: false },
    ];
    const p = onnxRuntimeProbe(() => listed);
    expect(p.check('cpu')).toEqual({ available: true });
    const cuda = p.check('cuda');
    // This project installs onnxruntime-node with onnxruntime-node-install=skip: no CUDA provider library.
    expect(cuda.available).toBe(false);
    if (!cuda.available) expect(cuda.reason).toContain('libonnxruntime_providers_cuda.so');
    expect(onnxRuntimeProbe(() => [{ name: 'cpu', bundled: true }]).check('cuda')).toMatchObject({
      available: false,
      reason: expect.stringContaining('no cuda backend'),
    });
  });
});
