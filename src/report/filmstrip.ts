/**
 * The episodes behind the numbers: for each recorded contrast (a condition and its wave's anchor, both in
 * the protocol's `frames.conditions`), the discordant pairs — b flips (the anchor succeeded, the
 * intervention failed) and c flips (the reverse) — and a sample of concordant pairs, each shown as the
 * reference and the intervention episode side by side: the frames at the registered steps, with what the
 * policy did drawn over each (filmstrip-overlay.ts: the tool's path and the step's action) and, under them, a timeline of the episode's memory reads (decision queries tall; a read that selected a
 * substituted record in red when it changed what the policy read, orange when it did not; others grey).
 * Pairs are taken in ascending seed order, at most MAX_PAIRS per kind and contrast, so the report's size
 * is bounded. Frames are content-addressed files (frames/<sha256 prefix>.png): identical frames are
 * written once. Pure: rows + recorded episodes in, pairs and file bytes out.
 */
import { createHash } from 'node:crypto';
import { ImepError } from '../core/index.js';
import type { Adjudication } from '../adjudication/index.js';
import type { EpisodeRow } from '../evidence/index.js';
import type { RecordedEpisode } from './frames-load.js';
import { actionAt, actionText, frameOverlay, overlayNote } from './filmstrip-overlay.js';
import { escXml, fx } from './svg.js';

export const MAX_PAIRS = { b: 4, c: 4, concordant: 2 } as const;
export type PairKind = keyof typeof MAX_PAIRS;

export interface FilmstripPair {
  readonly kind: PairKind;
  readonly wave: number;
  readonly anchor: string;
  readonly condition: string;
  readonly task: string;
  readonly seed: number;
  readonly attempt: number;
  readonly reference: RecordedEpisode;
  readonly intervention: RecordedEpisode;
  readonly referenceSuccess: boolean;
  readonly interventionSuccess: boolean;
}

export interface Filmstrips {
  readonly pairs: readonly FilmstripPair[];
  /** frames/<name>.png → PNG bytes. */
  readonly files: ReadonlyMap<string, Buffer>;
  /** base64 PNG → its file name. */
  readonly names: ReadonlyMap<string, string>;
  readonly note: string;
}

export function filmstrips(
  a: Adjudication,
  rows: readonly EpisodeRow[],
  recorded: readonly RecordedEpisode[],
  recordedConditions: readonly string[],
): Filmstrips {
  const key = (c: string, task: string, seed: number, attempt: number): string =>
    `${c}\u0000${task}\u0000${seed}\u0000${attempt}`;
  const rec = new Map(recorded.map((r) => [`${r.seq}`, r]));
  const rowOf = new Map<string, EpisodeRow>();
  const recOf = new Map<string, RecordedEpisode>();
  for (const r of rows) {
    const e = rec.get(String(r.seq));
    if (e === undefined) continue;
    if (
      e.condition !== r.condition ||
      e.task !== r.task ||
      e.seed !== r.seed ||
      e.attempt !== r.attempt ||
      e.episodeId !== r.episodeId
    ) {
      throw new ImepError(
        'E_UNIT_TAMPERED',
        `traces/frames.jsonl's line for row ${r.seq} names another episode than the row (${e.condition} ${e.task} seed ${e.seed} attempt ${e.attempt})`,
        {
          file: 'traces/frames.jsonl',
          hint: 'run `imep campaign verify UNIT`',
        },
      );
    }
    rowOf.set(`${r.wave}\u0000${key(r.condition, r.task, r.seed, r.attempt)}`, r);
    recOf.set(`${r.wave}\u0000${key(r.condition, r.task, r.seed, r.attempt)}`, e);
  }
  const registered = new Set(a.design.registeredAttempts);
  const pairs: FilmstripPair[] = [];
  for (const w of a.design.waves) {
    if (!recordedConditions.includes(w.anchor)) continue;
    for (const c of w.conditions) {
      if (c === w.anchor || !recordedConditions.includes(c)) continue;
      const found: Record<PairKind, FilmstripPair[]> = { b: [], c: [], concordant: [] };
      const candidates = rows
        .filter(
          (r) =>
            r.wave === w.id &&
            r.condition === c &&
            registered.has(r.attempt) &&
            r.status === 'ok' &&
            r.success !== null,
        )
        .sort((x, y) => x.task.localeCompare(y.task) || x.seed - y.seed || x.attempt - y.attempt);
      for (const r of candidates) {
        const k = `${w.id}\u0000${key(c, r.task, r.seed, r.attempt)}`;
        const refK = `${w.id}\u0000${key(w.anchor, r.task, r.seed, r.attempt)}`;
        const ref = rowOf.get(refK);
        const iv = recOf.get(k);
        const refRec = recOf.get(refK);
        if (
          ref === undefined ||
          iv === undefined ||
          refRec === undefined ||
          ref.status !== 'ok' ||
          ref.success === null
        )
          continue;
        const kind: PairKind = ref.success && !r.success ? 'b' : !ref.success && r.success ? 'c' : 'concordant';
        if (found[kind].length >= MAX_PAIRS[kind]) continue;
        found[kind].push({
          kind,
          wave: w.id,
          anchor: w.anchor,
          condition: c,
          task: r.task,
          seed: r.seed,
          attempt: r.attempt,
          reference: refRec,
          intervention: iv,
          referenceSuccess: ref.success,
          interventionSuccess: r.success as boolean,
        });
      }
      pairs.push(...found.b, ...found.c, ...found.concordant);
    }
  }
  const files = new Map<string, Buffer>();
  const names = new Map<string, string>();
  for (const p of pairs)
    for (const e of [p.reference, p.intervention])
      for (const f of e.frames) {
        if (names.has(f.png)) continue;
        const bytes = Buffer.from(f.png, 'base64');
        const name = `frames/${createHash('sha256').update(bytes).digest('hex').slice(0, 16)}.png`;
        names.set(f.png, name);
        files.set(name, bytes);
      }
  const note =
    recorded.length === 0
      ? 'The protocol registered no rollout frames (`frames` in the protocol), so no episode is shown.'
      : `Recorded: ${recordedConditions.join(', ')}, the first seeds of each task (${recorded.length} episodes). Shown per contrast: up to ${MAX_PAIRS.b} b flips, ${MAX_PAIRS.c} c flips and ${MAX_PAIRS.concordant} concordant pairs among the recorded seeds, in ascending seed order.`;
  return { pairs, files, names, note };
}

const KIND_TEXT: Readonly<Record<PairKind, string>> = { b: 'b flip', c: 'c flip', concordant: 'concordant' };

function outcome(s: boolean): string {
  return s ? 'success' : 'failure';
}

export function pairTitle(p: FilmstripPair): string {
  return `${KIND_TEXT[p.kind]} · ${p.condition} vs ${p.anchor} · ${p.task} seed ${p.seed}, attempt ${p.attempt}: ${p.anchor} ${outcome(p.referenceSuccess)}, ${p.condition} ${outcome(p.interventionSuccess)}`;
}

/** The reads of one episode on a step axis (0 … its last step). */
export function lastStep(e: RecordedEpisode): number {
  return Math.max(e.steps, ...e.reads.map((r) => r.step), ...e.frames.map((f) => f.step), 1);
}

/** The reads of one episode on a step axis 0 … `last` (the pair's last step: both episodes share the scale). */
export function readTimeline(e: RecordedEpisode, width: number, last = lastStep(e)): string {
  const H = 26;
  const x = (s: number): number => 4 + (s / last) * (width - 8);
  const marks: string[] = [`<line x1="4" y1="${H - 4}" x2="${fx(width - 4)}" y2="${H - 4}" stroke="#999"/>`];
  for (const f of e.frames) marks.push(`<path d="M${fx(x(f.step))} ${H - 1}l-3 3h6z" fill="#555"/>`);
  const byStep = new Map<number, { decision: boolean; sub: boolean; changed: boolean; n: number }>();
  for (const r of e.reads) {
    const cur = byStep.get(r.step) ?? { decision: false, sub: false, changed: false, n: 0 };
    byStep.set(r.step, {
      decision: cur.decision || r.decision,
      sub: cur.sub || r.substituted,
      changed: cur.changed || (r.substituted && r.changed),
      n: cur.n + 1,
    });
  }
  for (const [step, m] of [...byStep].sort((p, q) => p[0] - q[0])) {
    const colour = m.changed ? '#c62828' : m.sub ? '#ef8a00' : '#9e9e9e';
    const top = m.decision ? 2 : 10;
    marks.push(
      `<line class="read" data-step="${step}" data-substituted="${m.sub}" x1="${fx(x(step))}" y1="${top}" x2="${fx(x(step))}" y2="${H - 4}" stroke="${colour}" stroke-width="2"><title>${escXml(`step ${step}: ${m.n} read(s)${m.decision ? ', decision query' : ''}${m.sub ? (m.changed ? ', substituted (content changed)' : ', substituted (content unchanged)') : ', not substituted'}`)}</title></line>`,
    );
  }
  return `<svg xmlns="http://www.w3.org/2000/svg" class="timeline" width="${width}" height="${H + 4}" viewBox="0 0 ${width} ${H + 4}">${marks.join('')}</svg>`;
}

/** The CSS size a filmstrip frame is drawn at (render.ts: td.frame img). */
const FRAME_PX = 64;

function episodeRow(
  label: string,
  e: RecordedEpisode,
  names: ReadonlyMap<string, string>,
  steps: readonly number[],
  last: number,
): string {
  const byStep = new Map(e.frames.map((f) => [f.step, f]));
  const cells = steps
    .map((s) => {
      const f = byStep.get(s);
      return f === undefined
        ? `<td class="frame none">—<br><span>step ${s}</span></td>`
        : `<td class="frame"><div class="fov"><img src="${names.get(f.png)}" width="${f.width}" height="${f.height}" alt="${escXml(`${label} step ${s}`)}">${frameOverlay(e, s, f.width, f.height, FRAME_PX)}</div><br><span>step ${s}</span>${e.actions === undefined ? '' : `<br><span class="act">${escXml(actionText(actionAt(e, s)))}</span>`}</td>`;
    })
    .join('');
  return `<tr><th>${escXml(label)}</th>${cells}</tr><tr><td></td><td colspan="${steps.length}">${readTimeline(e, Math.max(200, steps.length * 74), last)}</td></tr>`;
}

export function filmstripHtml(f: Filmstrips): string {
  const legend =
    '<p class="legend">Timeline under each episode: one tick per step with memory reads — tall: a decision query; <span style="color:#c62828">red</span>: a read that selected a substituted record and changed what the policy read; <span style="color:#ef8a00">orange</span>: substituted, content unchanged; grey: not substituted. Small triangles: the registered frame steps.</p>';
  const body = f.pairs
    .map((p) => {
      const steps = [...new Set([...p.reference.frames, ...p.intervention.frames].map((x) => x.step))].sort(
        (a, b) => a - b,
      );
      const last = Math.max(lastStep(p.reference), lastStep(p.intervention));
      return `<div class="pair" data-kind="${p.kind}" data-condition="${escXml(p.condition)}" data-seed="${p.seed}"><p class="pair-title">${escXml(pairTitle(p))}</p><table class="filmstrip">${episodeRow(`${p.anchor} (reference)`, p.reference, f.names, steps, last)}${episodeRow(`${p.condition} (intervention)`, p.intervention, f.names, steps, last)}</table></div>`;
    })
    .join('\n');
  const overlays = overlayNote(f.pairs.flatMap((p) => [p.reference, p.intervention]));
  return `<p>${escXml(f.note)}</p>${f.pairs.length > 0 ? `${legend}<p class="legend overlay-note">${escXml(overlays)}</p>` : ''}${body}`;
}

export function filmstripMarkdown(f: Filmstrips): string {
  const overlays = overlayNote(f.pairs.flatMap((p) => [p.reference, p.intervention]));
  const out = [f.note, '', ...(overlays === '' ? [] : [overlays, ''])];
  for (const p of f.pairs) {
    const steps = [...new Set([...p.reference.frames, ...p.intervention.frames].map((x) => x.step))].sort(
      (a, b) => a - b,
    );
    out.push(
      `**${pairTitle(p)}**`,
      '',
      `| episode | ${steps.map((s) => `step ${s}`).join(' | ')} | reads (step: d = decision query, s = substituted) |`,
      `| --- | ${steps.map(() => '---').join(' | ')} | --- |`,
    );
    for (const [label, e] of [
      [`${p.anchor} (reference)`, p.reference],
      [`${p.condition} (intervention)`, p.intervention],
    ] as const) {
      const by = new Map(e.frames.map((x) => [x.step, x]));
      const reads = [...new Set(e.reads.map((r) => r.step))].map((s) => {
        const rs = e.reads.filter((r) => r.step === s);
        return `${s}${rs.some((r) => r.decision) ? 'd' : ''}${rs.some((r) => r.substituted) ? 's' : ''}`;
      });
      out.push(
        `| ${label} | ${steps.map((s) => `${by.has(s) ? `![step ${s}](${f.names.get(by.get(s)!.png)})` : '—'}${e.actions === undefined ? '' : ` ${actionText(actionAt(e, s))}`}`).join(' | ')} | ${reads.join(' ') || '—'} |`,
      );
    }
    out.push('');
  }
  return out.join('\n');
}
