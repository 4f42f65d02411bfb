/** A lite env that throws a bridge timeout at the steps `when` names (seed, attempt, step), for failure tests. */
import type { NdArray, ResetRequest, SimEnvironment, StepResult } from '../../src/runtime/environment.js';
import { ImepError } from '../../src/core/errors.js';

export class FlakyEnv implements SimEnvironment {
  private seed = -1;
  private attempt = 1;
  private steps = 0;
  constructor(
    private readonly inner: SimEnvironment,
    private readonly when: (seed: number, attempt: number, step: number) => boolean,
  ) {}
  get spec(): SimEnvironment['spec'] {
    return this.inner.spec;
  }
  reset(r: ResetRequest): Promise<StepResult> {
    this.seed = r.seed;
    this.attempt = Number(r.options?.['attempt'] ?? 1);
    this.steps = 0;
    return this.inner.reset(r);
  }
  step(a: NdArray): Promise<StepResult> {
    this.steps += 1;
    if (this.when(this.seed, this.attempt, this.steps))
      throw new ImepError('E_BRIDGE_TIMEOUT', `simulated timeout at seed ${this.seed} step ${this.steps}`);
    return this.inner.step(a);
  }
  close(): Promise<void> {
    return this.inner.close();
  }
}
