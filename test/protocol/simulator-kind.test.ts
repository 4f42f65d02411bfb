/**
 * The protocol's `simulator` block is parsed through the registered simulator kinds (src/protocol/kind-field.ts):
 * a kind nobody registered is the registry's refusal at simulator.kind, on the YAML line of the kind; a block's
 * fields are its kind's own; the lite kind's checks run through its face (SimulatorFace.checkProtocol /
 * checkMethodVisible) with the protocol's paths; its stated kwargs are filled in before the hash.
 */
import { describe, expect, it } from 'vitest';
import { simulatorFaces } from '../../src/core/index.js';
import { parseProtocol, protocolHash } from '../../src/protocol/index.js';
import { BASE, BAD_FILE, lineOf, refusal, replaceOnce } from './helpers.js';

const withSimulator = (block: string): string => replaceOnce(BASE, 'simulator:\n  kind: lite\n', block);

describe('simulator kinds in the protocol', () => {
  it('refuses an unregistered kind with the registry’s message at simulator.kind, naming the YAML line', () => {
    const text = withSimulator('simulator:\n  kind: mujoco\n');
    const e = refusal(text);
    expect(e.code).toBe('E_PROTOCOL_INVALID');
    expect(e.field).toBe('simulator.kind');
    expect(e.message).toBe('unknown simulator kind "mujoco"');
    expect(e.hint).toBe('registered simulator kinds: lite, sim-bridge');
    expect(e.line).toBe(lineOf(text, 'kind: mujoco'));
    expect(e.oneLine()).toBe(
      `${BAD_FILE}:${lineOf(text, 'kind: mujoco')}:9: simulator.kind: unknown simulator kind "mujoco" — registered simulator kinds: lite, sim-bridge`,
    );
  });

  it('a close name gets the registry’s did-you-mean; a missing kind lists the registered ones', () => {
    expect(refusal(withSimulator('simulator:\n  kind: lit\n')).hint).toBe(
      'did you mean "lite"? registered simulator kinds: lite, sim-bridge',
    );
    const missing = refusal(withSimulator('simulator:\n  transport: bridge\n'));
    expect([missing.field, missing.message, missing.hint]).toEqual([
      'simulator.kind',
      'missing required field "kind"',
      'use one of: lite, sim-bridge',
    ]);
  });

  it("a field of another kind is unknown here, listing the kind's own fields", () => {
    const e = refusal(withSimulator('simulator:\n  kind: lite\n  adapter: mikasa\n'));
    expect([e.field, e.message, e.hint]).toEqual([
      'simulator.adapter',
      'unknown field "adapter"',
      'allowed here: kind, transport, executionNoise',
    ]);
    const bad = refusal(withSimulator('simulator:\n  kind: sim-bridge\n  adapter: gazebo\n'));
    expect([bad.field, bad.message, bad.hint]).toEqual([
      'simulator.adapter',
      '"gazebo" is not allowed here',
      'use one of: mikasa, simplerenv, libero, replay',
    ]);
  });

  it('the lite kind’s checks (env ids, method-visible fields) report through its face at the protocol’s paths', () => {
    const id = refusal(replaceOnce(BASE, '  - id: ShellGameTouch-lite\n', '  - id: ShellGameTouch-lit\n'));
    expect([id.field, id.message]).toEqual(['envs[0].id', 'unknown lite environment "ShellGameTouch-lit"']);
    expect(id.hint).toMatch(/^did you mean "ShellGameTouch-lite"\? known lite environments: /);
    const shown = refusal(
      replaceOnce(BASE, 'methodVisible: [rgb, toolPosition, instruction]', 'methodVisible: [rgb, cup]'),
    );
    expect([shown.field, shown.message]).toEqual([
      'allowlists.methodVisible[1]',
      'ShellGameTouch-lite does not show "cup" to the policy',
    ]);
    const lite = simulatorFaces.require('lite');
    expect(typeof lite.checkProtocol).toBe('function');
    expect(typeof lite.checkMethodVisible).toBe('function');
  });

  it('the parsed block is the kind’s own, with its stated kwargs filled in (and bound by the hash)', () => {
    const p = parseProtocol(BASE, BAD_FILE).protocol;
    expect(p.simulator).toEqual({ kind: 'lite' });
    expect(p.envs[0]?.kwargs).toEqual({ blackoutFromStep: 6, toolStart: 'home' });
    const stated = parseProtocol(
      replaceOnce(BASE, '      blackoutFromStep: 6\n', '      blackoutFromStep: 6\n      toolStart: home\n'),
      BAD_FILE,
    ).protocol;
    expect(protocolHash(stated)).toBe(protocolHash(p));
    const bridged = parseProtocol(withSimulator('simulator:\n  kind: lite\n  transport: bridge\n'), BAD_FILE).protocol;
    expect(bridged.simulator).toEqual({ kind: 'lite', transport: 'bridge' });
    expect(simulatorFaces.require('lite').inProcess?.(bridged.simulator)).toBe(false);
    expect(simulatorFaces.require('lite').inProcess?.(p.simulator)).toBe(true);
  });
});
