/**
 * Every method-visible field a protocol lists is shown by some environment (src/campaign/bridge-open.ts): its one env,
 * or — a suite whose tasks show different things (RememberColor's `cubes`, Intercept's `ball`) — at least one of them.
 */
import { describe, expect, it } from 'vitest';
import { assertEveryFieldShown } from '../../src/campaign/bridge-open.js';
import { ImepError } from '../../src/core/index.js';

const refusal = (f: () => void): ImepError => {
  try {
    f();
  } catch (e) {
    if (e instanceof ImepError) return e;
    throw e;
  }
  throw new Error('not refused');
};

describe('method-visible fields shown by some environment', () => {
  const suite = new Map([
    ['mikasa/RememberColor3-VLA-v0', ['joints', 'cubes']],
    ['mikasa/InterceptMedium-VLA-v0', ['joints', 'ball', 'goal']],
  ]);

  it('a suite may list a field only some of its tasks show', () => {
    expect(() => assertEveryFieldShown(['joints', 'cubes', 'ball', 'goal'], suite, 'p.yaml')).not.toThrow();
  });

  it('a field no environment shows is refused at its allowlist entry, naming what each shows', () => {
    const e = refusal(() => assertEveryFieldShown(['joints', 'image'], suite, 'p.yaml'));
    expect([e.code, e.field, e.file]).toEqual(['E_PROTOCOL_INVALID', 'allowlists.methodVisible[1]', 'p.yaml']);
    expect(e.message).toBe('no environment of the protocol shows "image" to the policy');
    expect(e.hint).toBe(
      'mikasa/RememberColor3-VLA-v0: joints, cubes; mikasa/InterceptMedium-VLA-v0: joints, ball, goal',
    );
  });

  it('one environment: the refusal names it, as before suites', () => {
    const e = refusal(() => assertEveryFieldShown(['rgb'], new Map([['replay/tiny', ['image', 'state']]]), 'p.yaml'));
    expect(e.message).toBe('replay/tiny does not show "rgb" to the policy');
    expect(e.hint).toBe('method-visible fields of replay/tiny: image, state');
  });
});
