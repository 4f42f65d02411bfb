import { describe, expect, it } from 'vitest';
import { KindRegistry, isImepError, type Kind } from '../../src/core/index.js';

interface Toy extends Kind {
  readonly size: number;
}

describe('KindRegistry', () => {
  it('registers, looks up and unregisters by name, in registration order', () => {
    const r = new KindRegistry<Toy>('toy kind', 'toys[].kind');
    const undoB = r.register({ name: 'beta', summary: 'b', size: 2 });
    r.register({ name: 'alpha', summary: 'a', size: 1 });
    expect(r.names()).toEqual(['beta', 'alpha']);
    expect(r.require('alpha').size).toBe(1);
    undoB();
    expect(r.has('beta')).toBe(false);
    expect(r.get('beta')).toBeUndefined();
    undoB(); // twice is harmless
    expect(r.names()).toEqual(['alpha']);
  });

  it('refuses a name registered twice and a name that is not a plain word', () => {
    const r = new KindRegistry<Toy>('toy kind', 'toys[].kind');
    r.register({ name: 'alpha', summary: 'a', size: 1 });
    expect(() => r.register({ name: 'alpha', summary: 'again', size: 3 })).toThrow(/registered twice/);
    expect(() => r.register({ name: 'two words', summary: '', size: 0 })).toThrow(/not a plain word/);
  });

  it('an unknown name is E_PROTOCOL_INVALID naming the field, a close name and the registered ones', () => {
    const r = new KindRegistry<Toy>('simulator kind', 'simulator.kind');
    r.register({ name: 'lite', summary: '', size: 0 });
    r.register({ name: 'sim-bridge', summary: '', size: 0 });
    try {
      r.require('lité', { file: 'p.yaml' });
      expect.unreachable();
    } catch (e) {
      expect(isImepError(e) && e.code).toBe('E_PROTOCOL_INVALID');
      if (!isImepError(e)) throw e;
      expect(e.message).toBe('unknown simulator kind "lité"');
      expect(e.field).toBe('simulator.kind');
      expect(e.file).toBe('p.yaml');
      expect(e.hint).toBe('did you mean "lite"? registered simulator kinds: lite, sim-bridge');
    }
  });

  it('an entry registered in a full registry lands in its linked face registry, and leaves it with unregister', () => {
    const faces = new KindRegistry<Kind>('toy kind', 'toys[].kind');
    const full = new KindRegistry<Toy>('toy kind', 'toys[].kind', faces);
    const undo = full.register({ name: 'alpha', summary: 'a', size: 1 });
    expect(faces.names()).toEqual(['alpha']);
    undo();
    expect(faces.names()).toEqual([]);
    // a face already taken refuses the whole registration
    faces.register({ name: 'beta', summary: 'b' });
    expect(() => full.register({ name: 'beta', summary: 'b', size: 2 })).toThrow(/registered twice/);
    expect(full.has('beta')).toBe(false);
  });

  it('override stands a fake in for a registered entry (and its face) until the returned function puts it back', () => {
    const faces = new KindRegistry<Kind>('toy kind', 'toys[].kind');
    const full = new KindRegistry<Toy>('toy kind', 'toys[].kind', faces);
    const builtin = { name: 'alpha', summary: 'a', size: 1 };
    full.register(builtin);
    full.register({ name: 'beta', summary: 'b', size: 2 });
    const fake = { name: 'alpha', summary: 'fake', size: 9 };
    const restore = full.override(fake);
    expect(full.require('alpha')).toBe(fake);
    expect(faces.require('alpha').summary).toBe('fake');
    expect(full.names()).toEqual(['alpha', 'beta']); // the order is kept
    restore();
    expect(full.require('alpha')).toBe(builtin);
    expect(faces.require('alpha').summary).toBe('a');
    restore(); // twice is harmless
    expect(full.require('alpha')).toBe(builtin);
    expect(() => full.override({ name: 'gamma', summary: '', size: 0 })).toThrow(/is not registered/);
  });
});
