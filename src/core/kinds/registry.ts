/**
 * A registry of kinds: named entries that a folder registers and the rest of IMEP looks up by name, never by a
 * switch on the name. Simulator kinds, policy runtime kinds and condition kinds are each one registry
 * (./registries.ts holds the protocol-facing ones, the folders above hold the full entries: see
 * docs/extending.md). A name is registered once; looking up an unknown name is the user's error (a protocol names
 * a kind nobody registered) and says which names exist.
 */
import { closestName } from '../did-you-mean.js';
import { ImepError } from '../errors.js';

/** What every registered kind has: the name a protocol uses for it and one line saying what it is. */
export interface Kind {
  /** The name in the protocol (`simulator.kind`, `policy.runtime`, `conditions[].kind`). */
  readonly name: string;
  /** One line: what the kind is (shown by `imep protocol kinds` and in errors). */
  readonly summary: string;
}

/** Where a lookup comes from, for the error a missing name raises. */
export interface KindLookupSite {
  readonly file?: string;
  readonly field?: string;
}

export class KindRegistry<K extends Kind> {
  readonly #entries = new Map<string, K>();
  readonly #linked: Array<KindRegistry<Kind>> = [];

  /**
   * @param what  the kind family in words, e.g. "simulator kind"
   * @param field the protocol field that names one, e.g. "simulator.kind"
   * @param faces registries that also receive every entry registered here (the protocol-facing registry of the
   *              same family, so one registration serves both the protocol checks and the runner)
   */
  constructor(
    readonly what: string,
    readonly field: string,
    ...faces: Array<KindRegistry<Kind>>
  ) {
    this.#linked.push(...faces);
  }

  /**
   * Adds `kind`; returns the function that removes it again (for tests that register a toy kind). A name already
   * taken is a programming error (E_INTERNAL): two folders claiming one protocol word.
   */
  register(kind: K): () => void {
    if (this.#entries.has(kind.name))
      throw new ImepError('E_INTERNAL', `${this.what} "${kind.name}" is registered twice`, {
        hint: 'each kind has one entry, in the folder that owns it',
      });
    if (!/^[A-Za-z][A-Za-z0-9_-]*$/.test(kind.name))
      throw new ImepError('E_INTERNAL', `${this.what} name "${kind.name}" is not a plain word`, {
        hint: 'a kind name is letters, digits, "_" and "-", starting with a letter',
      });
    const undo: Array<() => void> = [];
    try {
      for (const f of this.#linked) undo.push(f.register(kind));
    } catch (e) {
      for (const u of undo) u();
      throw e;
    }
    this.#entries.set(kind.name, kind);
    return () => {
      if (this.#entries.get(kind.name) !== kind) return;
      this.#entries.delete(kind.name);
      for (const u of undo) u();
    };
  }

  /**
   * Stands `kind` in for the entry of the same name (a registered one, e.g. a built-in) until the returned function
   * puts the old entry back: for tests that drive a built-in kind with a fake (a policy server kind with an in-memory
   * connector). A name not registered is E_INTERNAL (use `register`).
   */
  override(kind: K): () => void {
    const old = this.#entries.get(kind.name);
    if (old === undefined)
      throw new ImepError('E_INTERNAL', `${this.what} "${kind.name}" is not registered, so it cannot be overridden`, {
        hint: 'register a new kind with register()',
      });
    const undo = this.#linked.map((f) => f.override(kind));
    this.#entries.set(kind.name, kind);
    return () => {
      if (this.#entries.get(kind.name) !== kind) return;
      this.#entries.set(kind.name, old);
      for (const u of undo) u();
    };
  }

  has(name: string): boolean {
    return this.#entries.has(name);
  }

  /** The entry named `name`, or undefined. */
  get(name: string): K | undefined {
    return this.#entries.get(name);
  }

  /** The entry named `name`; an unknown name is E_PROTOCOL_INVALID naming the field and the registered names. */
  require(name: string, site: KindLookupSite = {}): K {
    const kind = this.#entries.get(name);
    if (kind !== undefined) return kind;
    const names = this.names();
    const close = closestName(name, names);
    throw new ImepError('E_PROTOCOL_INVALID', `unknown ${this.what} "${name}"`, {
      ...(site.file === undefined ? {} : { file: site.file }),
      field: site.field ?? this.field,
      hint: `${close === undefined ? '' : `did you mean "${close}"? `}registered ${this.what}s: ${names.join(', ') || 'none'}`,
    });
  }

  /** The registered names, in registration order. */
  names(): string[] {
    return [...this.#entries.keys()];
  }

  /** The registered entries, in registration order. */
  all(): K[] {
    return [...this.#entries.values()];
  }
}
