/**
 * Text that comes from outside IMEP (a policy host, a simulator server: names, versions, error messages, spec
 * fields, observation keys, metadata), made safe to print, log, store in rows and put in a report. One pure
 * function, applied once where such text enters (the bridge client's receive path, the supervisor's stderr tail,
 * the runner's failure record) — and again, cheaply, by the terminal printers.
 *
 * What it does, in order:
 * - caps the length: text over `max` UTF-16 units keeps its first `max` and ends with a visible marker naming the
 *   original length ("…[truncated, 70000 chars]");
 * - removes ANSI / ECMA-48 escape sequences (CSI `ESC [ … final`, OSC `ESC ] … BEL|ST`, DCS/SOS/PM/APC strings,
 *   two-byte `ESC x`) and their 8-bit C1 forms, each replaced by U+FFFD so the removal stays visible;
 * - writes line breaks (CR, LF, NEL, U+2028, U+2029) as the visible escapes `\r`, `\n`, `\u0085`, … (one line stays
 *   one line: a newline cannot start a forged line of output);
 * - writes a tab as a space; replaces every other C0 / C1 control and DEL, the bidirectional controls (U+061C, U+200E/F, U+202A–E,
 *   U+2066–9) and zero-width characters (U+200B–D, U+2060, U+FEFF) by U+FFFD, and a lone surrogate (from
 *   ill-formed UTF-8 on the wire) by U+FFFD.
 * Printable text (every script, emoji) passes unchanged, and clean text within the cap is returned as it is.
 */
import { escapeLineBreaks } from './errors.js';

/** The cap of a short name from outside (a wire error code, a key quoted in an IMEP message). */
export const OUTSIDE_NAME_MAX = 256;
/** The cap of an error message, a name, a version, a key, a spec or metadata value: any other text from outside. */
export const OUTSIDE_MESSAGE_MAX = 1024;

const REPLACEMENT = '\uFFFD';
/** Anything that is not plain printable ASCII: the fast path returns text without it (and within the cap) as it is. */
const NOT_PRINTABLE_ASCII = /[^\x20-\x7e]/;
/**
 * Escape sequences: 7-bit CSI, OSC / DCS / SOS / PM / APC strings (to BEL or ST, or to the end), other `ESC x`, a lone
 * ESC; 8-bit CSI (U+009B) and the 8-bit string introducers (U+0090, U+0098, U+009D–F) with what follows them.
 */
const ESCAPES =
  /\x1b\[[\x30-\x3f]*[\x20-\x2f]*[\x40-\x7e]?|\x1b[\]PX^_][^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)?|\x1b[\x20-\x7e]?|\x9b[\x30-\x3f]*[\x20-\x2f]*[\x40-\x7e]?|[\x90\x98\x9d-\x9f][^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)?/g;
const CONTROLS =
  /[\x00-\x1f\x7f-\x9f\u061c\u200b-\u200f\u202a-\u202e\u2060\u2066-\u2069\ufeff]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

/** `text` (any value, stringified) safe to print, log, store and report; at most `max` units plus the marker. */
export function outsideText(text: unknown, max: number = OUTSIDE_MESSAGE_MAX): string {
  const s = typeof text === 'string' ? text : String(text);
  if (s.length <= max && !NOT_PRINTABLE_ASCII.test(s)) return s;
  let cut = s.length > max ? s.slice(0, max) : s;
  // do not leave half of a surrogate pair at the cut (it would read as ill-formed text)
  if (cut.length < s.length && /[\ud800-\udbff]$/.test(cut)) cut = cut.slice(0, -1);
  // line breaks as ImepError's one-line messages write them (CR, LF, U+2028, U+2029), and NEL alike
  const clean = escapeLineBreaks(cut.replace(ESCAPES, REPLACEMENT))
    .replace(/\x85/g, '\\u0085')
    .replace(/\t/g, ' ')
    .replace(CONTROLS, REPLACEMENT);
  return cut.length < s.length ? `${clean}…[truncated, ${s.length} chars]` : clean;
}

/**
 * A value from outside (a decoded reply body: plain maps, arrays, strings, numbers) with every map key and every string
 * passed through outsideText at `max` (one cap for both: a key and a list entry naming it stay equal). Binary values (typed arrays, ndarrays' data) and class
 * instances pass untouched. Returns the value itself when nothing changed. For bodies of rare ops (hello, make): the
 * hot ops' observations are checked against the declared spec instead (src/bridges/observation-spec.ts).
 */
export function outsideTree<T>(value: T, max: number = OUTSIDE_MESSAGE_MAX): T {
  return walk(value, max, 0) as T;
}

const MAX_DEPTH = 64;

function walk(v: unknown, max: number, depth: number): unknown {
  if (typeof v === 'string') return outsideText(v, max);
  if (typeof v !== 'object' || v === null || ArrayBuffer.isView(v) || depth > MAX_DEPTH) return v;
  if (Array.isArray(v)) {
    let out: unknown[] | undefined;
    for (let i = 0; i < v.length; i++) {
      const w = walk(v[i], max, depth + 1);
      if (w !== v[i]) (out ??= v.slice())[i] = w;
    }
    return out ?? v;
  }
  const proto: unknown = Object.getPrototypeOf(v);
  if (proto !== Object.prototype && proto !== null) return v;
  const o = v as Record<string, unknown>;
  let changed = false;
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(o)) {
    const key = outsideText(k, max);
    const w = walk(o[k], max, depth + 1);
    if (key !== k || w !== o[k]) changed = true;
    // two keys that read the same once cleaned: the later one keeps a visible, distinct name (nothing is dropped)
    let name = key;
    for (let n = 2; Object.prototype.hasOwnProperty.call(out, name); n++) name = `${key}#${n}`;
    if (name !== key) changed = true;
    out[name] = w;
  }
  return changed ? out : v;
}

/** Escape sequences, and controls other than LF and tab, that a printed line must not carry to a terminal. */
const TERMINAL_UNSAFE = new RegExp(
  `${ESCAPES.source}|[\\x00-\\x08\\x0b-\\x1f\\x7f-\\x9f\\u061c\\u200b-\\u200f\\u202a-\\u202e\\u2060\\u2066-\\u2069\\ufeff]`,
  'g',
);

/**
 * The terminal printers' own defence (cheap, whatever the text's origin): escape sequences and control characters
 * other than the line feeds and tabs IMEP's own output uses become U+FFFD. Outside text has already been cleaned
 * where it entered (outsideText); this only makes sure nothing that slipped past can move the cursor or hide a line.
 */
export function terminalText(text: string): string {
  return NOT_PRINTABLE_ASCII.test(text) ? text.replace(TERMINAL_UNSAFE, REPLACEMENT) : text;
}
