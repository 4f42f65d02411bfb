/**
 * The reports of the shipped lite protocols that run in about a minute or less, each run through closeout:
 * the main job (protocols/shellgame-blackout.yaml, README "Quick start") and protocols/shellgame-donor-swap.yaml
 * (which records rollout frames) at their registered size, and protocols/remembercolor-substitution.yaml (two
 * tasks × two attempts) at 40 seeds per task instead of 200. The other shipped files need a real simulator, a
 * hosted policy, or minutes. Each report is rendered in headless Chromium (Debian's /usr/bin/chromium through
 * playwright-core): the DOM holds the context, the glossary, the forest plot with one mark per criterion carrying
 * the verdict's own routed bound, the per-task table, and — for the donor swap — a filmstrip of a discordant pair
 * whose frames load. The report is byte-identical when written twice, and each report's HTML plus frames (the
 * main job's first) stays under the registered cap. Screenshots go to the test's temp folder.
 */
import { chmod, cp, readFile, readdir, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chromium, type Page } from 'playwright-core';
import type { Adjudication } from '../../src/adjudication/index.js';
import { runThrough } from '../../src/app/pipeline.js';
import { figures, RHO_FLOOR_TOP } from '../../src/report/figures.js';
import { REPORT_BYTES_CAP, reportSizeLine, writeReport } from '../../src/report/write-report.js';
import type { EpisodeRow } from '../../src/evidence/records/episode-row.js';
import { isImepError } from '../../src/core/errors.js';
import { filmstrips } from '../../src/report/filmstrip.js';
import type { RecordedEpisode } from '../../src/report/frames-load.js';
import { removeTree, tempDir } from '../evidence/helpers.js';
import { ROOT } from '../campaign/helpers.js';
import { CHROMIUM, CHROMIUM_ARGS } from './browser.js';

interface Rendered {
  readonly unit: string;
  readonly out: string;
  readonly adjudication: Adjudication;
  readonly written: Awaited<ReturnType<typeof writeReport>>;
}

let root: string;
const runs = new Map<string, Rendered>();
/** The main job (README "Quick start"), the protocol that records frames, and the two-task protocol. */
const SHIPPED = ['shellgame-blackout', 'shellgame-donor-swap', 'remembercolor-substitution'];

/** The shipped file, or (RememberColor, 2 × 200 units × 2 attempts) the same file at 40 seeds per task. */
async function protocolFile(name: string): Promise<string> {
  const file = join(ROOT, 'protocols', `${name}.yaml`);
  if (name !== 'remembercolor-substitution') return file;
  const text = (await readFile(file, 'utf8'))
    .replace('- { start: 9001, end: 9200 }', '- { start: 9001, end: 9040 }')
    .replace(/^n: 200 .*$/m, 'n: 40');
  const out = join(root, `${name}.yaml`);
  await writeFile(out, text);
  return out;
}

async function closeout(name: string): Promise<Rendered> {
  const campaigns = join(root, name);
  const unit = await runThrough(await protocolFile(name), {
    campaignsDir: campaigns,
    root: ROOT,
    progress: null,
    say: () => undefined,
    operator: { id: 'report-test', source: 'explicit' },
    through: 'closeout',
    sameOperatorReason: 'report test',
  });
  const adjudication = JSON.parse(
    await readFile(join(unit, 'adjudication/001/adjudication.json'), 'utf8'),
  ) as Adjudication;
  const out = join(root, `${name}-report`);
  return { unit, out, adjudication, written: await writeReport(unit, { outDir: out }) };
}

beforeAll(async () => {
  root = await tempDir('imep-shipped-reports-');
  for (const name of SHIPPED) runs.set(name, await closeout(name));
}, 600_000);
afterAll(async () => removeTree(root));

async function withPage<T>(html: string, shot: string, fn: (page: Page) => Promise<T>): Promise<T> {
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS, headless: true });
  try {
    const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
    const errors: string[] = [];
    const remote: string[] = [];
    page.on('console', (m) => (m.type() === 'error' ? errors.push(m.text()) : undefined));
    page.on('pageerror', (e) => errors.push(String(e)));
    page.on('request', (r) => (r.url().startsWith('file://') ? undefined : remote.push(r.url())));
    await page.goto(`file://${html}`, { waitUntil: 'load' });
    const value = await fn(page);
    await page.screenshot({ path: shot, fullPage: true });
    expect(errors).toEqual([]);
    expect(remote).toEqual([]);
    return value;
  } finally {
    await browser.close();
  }
}

interface Dom {
  readonly forest: {
    criterion: string;
    verdict: string;
    lower: string | null;
    upper: string | null;
    label: string | null;
    deciding: number;
  }[];
  readonly glossary: string;
  readonly context: string;
  readonly breakdownTasks: string[];
  readonly pairs: {
    kind: string;
    condition: string;
    images: number;
    loaded: number;
    reads: number;
    substituted: number;
  }[];
}

async function readDom(page: Page): Promise<Dom> {
  const text = async (sel: string): Promise<string> => page.$eval(sel, (el) => el.textContent ?? '');
  return {
    forest: await page.$$eval('figure[data-figure="forest"] g.forest-mark', (gs) =>
      gs.map((g) => ({
        criterion: g.getAttribute('data-criterion') ?? '',
        verdict: g.getAttribute('data-verdict') ?? '',
        lower: g.getAttribute('data-lower'),
        upper: g.getAttribute('data-upper'),
        label: g.getAttribute('data-bound-label'),
        deciding: g.querySelectorAll('.deciding-bound').length,
      })),
    ),
    glossary: await text('section#glossary'),
    context: await text('section#context'),
    breakdownTasks: await page.$$eval('section#breakdown table:first-of-type tbody tr', (trs) =>
      trs.map((tr) => tr.children[1]?.textContent ?? ''),
    ),
    pairs: await page.$$eval('section#episodes .pair', (ps) =>
      ps.map((p) => {
        const imgs = [...p.querySelectorAll('img')] as unknown as { complete: boolean; naturalWidth: number }[];
        return {
          kind: p.getAttribute('data-kind') ?? '',
          condition: p.getAttribute('data-condition') ?? '',
          images: imgs.length,
          loaded: imgs.filter((i) => i.complete && i.naturalWidth > 0).length,
          reads: p.querySelectorAll('svg.timeline line.read').length,
          substituted: p.querySelectorAll('svg.timeline line.read[data-substituted="true"]').length,
        };
      }),
    ),
  };
}

async function filesOf(dir: string): Promise<Map<string, Buffer>> {
  const out = new Map<string, Buffer>();
  for (const e of await readdir(dir, { recursive: true, withFileTypes: true })) {
    if (!e.isFile()) continue;
    const p = join(e.parentPath, e.name);
    out.set(p.slice(dir.length), await readFile(p));
  }
  return out;
}

describe('the reports of the shipped lite protocols', () => {
  for (const name of SHIPPED) {
    it(`${name}: context, glossary, one forest mark per criterion on its routed bound, the per-task table`, async () => {
      const r = runs.get(name)!;
      const dom = await withPage(r.written.html, join(root, `${name}.png`), readDom);
      const a = r.adjudication;
      expect(dom.forest.map((f) => f.criterion)).toEqual(a.verdicts.map((v) => v.criterion));
      a.verdicts.forEach((v, i) => {
        const f = dom.forest[i]!;
        expect(f.verdict).toBe(v.verdict);
        if (v.bound == null) {
          expect(f.lower).toBeNull();
          return;
        }
        // the very bound the verdict routed on (its interval family and coverage), not a recomputed one
        expect(Number(f.lower)).toBe(v.bound.lower);
        expect(Number(f.upper)).toBe(v.bound.upper);
        expect(f.label).toBe(v.bound.label);
        if (v.bound.routedOn === 'bound') expect(f.deciding).toBeGreaterThan(0);
      });
      for (const word of [
        'S_π',
        'T_μ',
        'one-ULP',
        'oracle',
        'holds',
        'not detected',
        'unresolved',
        'registeredRuleMet',
      ])
        expect(dom.glossary).toContain(word);
      const protocol = JSON.parse(await readFile(join(r.unit, 'protocol.json'), 'utf8')) as {
        title: string;
        description?: string;
        conditions: { description?: string }[];
      };
      expect(dom.context).toContain(protocol.title);
      if (protocol.description) expect(dom.context).toContain(protocol.description);
      for (const c of protocol.conditions) if (c.description) expect(dom.context).toContain(c.description);
      for (const t of a.design.tasks) expect(dom.breakdownTasks.some((x) => x.startsWith(t))).toBe(true);
      expect((await stat(join(root, `${name}.png`))).size).toBeGreaterThan(10_000);
    }, 120_000);
  }

  it('remembercolor-substitution: RememberColor3 and RememberColor5 and both attempts apart in the per-task table', async () => {
    const r = runs.get('remembercolor-substitution')!;
    const md = await readFile(r.written.markdown, 'utf8');
    const section = md.slice(md.indexOf('## Per task and attempt'), md.indexOf('## The episodes behind the numbers'));
    expect(r.adjudication.design.tasks).toHaveLength(2);
    for (const task of r.adjudication.design.tasks)
      for (const attempt of ['1', '2 (registered)'])
        expect(section, `${task} attempt ${attempt}`).toContain(`| 1 | ${task} | ${attempt} | A | 40/40 (100.00%) |`);
    // T flips every attempt-2 outcome of each task, none of attempt 1 (the pooled estimand shows neither apart)
    for (const task of r.adjudication.design.tasks) {
      expect(section).toContain(`| 1 | ${task} | 1 | T vs A | 40 | b=0, c=0 | 0.00% | +0.00 pp |`);
      expect(section).toContain(`| 1 | ${task} | 2 (registered) | T vs A | 40 | b=40, c=0 | 100.00% | +100.00 pp |`);
    }
  });

  it('shellgame-donor-swap: a filmstrip per discordant pair with its frames and the substituted reads on the timeline', async () => {
    const r = runs.get('shellgame-donor-swap')!;
    const dom = await withPage(r.written.html, join(root, 'donor-swap-episodes.png'), readDom);
    const b = dom.pairs.filter((p) => p.kind === 'b' && p.condition === 'T');
    expect(b.length).toBeGreaterThanOrEqual(1);
    for (const p of b) {
      expect(p.images).toBeGreaterThan(0);
      expect(p.loaded).toBe(p.images);
      expect(p.reads).toBeGreaterThan(0);
      expect(p.substituted).toBeGreaterThan(0); // T's reads selected substituted records
    }
    // S flips nothing here: its pairs are the concordant sample
    expect(dom.pairs.filter((p) => p.condition === 'S').every((p) => p.kind === 'concordant')).toBe(true);
    expect(r.written.frames.length).toBeGreaterThan(0);
  });

  it('the ρ figure draws each condition on the interval family its verdict routed on, on a 0-based shared axis', async () => {
    const r = runs.get('shellgame-donor-swap')!;
    const a = r.adjudication;
    const rows = (await readFile(join(r.unit, 'rows/rows.jsonl'), 'utf8'))
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l) as EpisodeRow);
    const fig = figures(a, rows).find((f) => f.id === 'outcome-change')!;
    const values = (fig.spec as { data: { values: { condition: string; lower: number; upper: number }[] } }).data
      .values;
    const at = (c: string): { lower: number; upper: number } => values.find((v) => v.condition === c)!;
    const pct = (x: number): number => Number((100 * x).toFixed(6));
    const q3 = a.verdicts.find((v) => v.criterion === 'Q3_T')!;
    const t = a.conditions.find((c) => c.condition === 'T')!;
    // T: the verdict's one-sided exact bound (Q3_T), not the two-sided 95% CP interval the figure drew before
    expect(at('T')).toEqual({ ...at('T'), lower: pct(q3.bound!.lower), upper: pct(q3.bound!.upper) });
    expect(at('T').lower).not.toBe(pct(t.vsAnchor!.rhoCp95.lower));
    // C: the companion upper bound Q3_T routed on
    expect(at('C').upper).toBe(pct(q3.bound!.companions.find((k) => k.estimand === 'rho_C')!.upper));
    // S: no criterion on ρ_S — the one-sided 95% Clopper–Pearson bounds of the Q3/Q4 rules
    const s = a.conditions.find((c) => c.condition === 'S')!;
    expect(at('S')).toEqual({
      ...at('S'),
      lower: pct(s.vsAnchor!.rhoCpOneSided95.lower),
      upper: pct(s.vsAnchor!.rhoCpOneSided95.upper),
    });
    const y = (fig.spec as unknown as { layer: { encoding: { y: { scale?: { domain: number[] } } } }[] }).layer[0]!
      .encoding.y.scale!.domain;
    expect(y).toEqual([0, 100]); // T's ρ reaches 100%: the top follows the largest bound, from 0
    // a campaign whose every ρ is tiny keeps the floor top: 1.2% does not fill the axis
    const tiny = {
      ...a,
      conditions: a.conditions.map((c) =>
        c.vsAnchor ? { ...c, vsAnchor: { ...c.vsAnchor, rho: 0.004, rhoCpOneSided95: { lower: 0, upper: 0.012 } } } : c,
      ),
      verdicts: [],
      estimands: [],
    } as Adjudication;
    const small = figures(tiny, rows).find((f) => f.id === 'outcome-change')!;
    expect(
      (small.spec as unknown as { layer: { encoding: { y: { scale?: { domain: number[] } } } }[] }).layer[0]!.encoding.y
        .scale!.domain,
    ).toEqual([0, RHO_FLOOR_TOP]);
  });

  it('a changed frames trace is refused: the frames are hashed into the unit', async () => {
    const r = runs.get('shellgame-donor-swap')!;
    const copy = join(root, 'tampered-unit');
    await cp(r.unit, copy, { recursive: true });
    const file = join(copy, 'traces/frames.jsonl');
    await chmod(file, 0o644);
    const text = await readFile(file, 'utf8');
    await writeFile(file, text.replace('"seed":611000', '"seed":611001'));
    const err = await writeReport(copy, { outDir: join(root, 'tampered-report') }).then(
      () => null,
      (e: unknown) => e,
    );
    expect(isImepError(err) && err.code).toBe('E_UNIT_TAMPERED');
    expect((err as { file?: string }).file).toBe(join(copy, 'traces/frames.jsonl'));
  });

  it('the main job’s report (HTML + frames) stays under the registered size cap; so does every other', async () => {
    for (const name of SHIPPED) {
      const w = runs.get(name)!.written;
      console.log(`${name} ${w.sizeLine}`);
      expect(w.htmlBytes + w.frameBytes, name).toBeLessThan(REPORT_BYTES_CAP);
    }
    expect(runs.get('shellgame-blackout')!.written.frames).toEqual([]); // the main job records no frames
  });

  it('the same unit gives the same bytes', async () => {
    const r = runs.get('shellgame-donor-swap')!;
    const again = join(root, 'donor-swap-again');
    const second = await writeReport(r.unit, { outDir: again });
    const first = await filesOf(r.out);
    const other = await filesOf(again);
    expect([...other.keys()].sort()).toEqual([...first.keys()].sort());
    for (const [k, v] of first) expect(other.get(k)?.equals(v), k).toBe(true);
    expect(second.sizeLine).toBe(reportSizeLine(second));
    expect(second.htmlBytes + second.frameBytes).toBe(
      (await stat(second.html)).size +
        (await Promise.all(second.frames.map((f) => stat(join(again, f))))).reduce((n, s) => n + s.size, 0),
    );
    expect(second.htmlBytes + second.frameBytes).toBeLessThan(REPORT_BYTES_CAP);
  });
});

describe('filmstrips from recorded episodes', () => {
  it('a frames line that names another episode than its row is refused', async () => {
    const r = runs.get('shellgame-donor-swap')!;
    const rows = (await readFile(join(r.unit, 'rows/rows.jsonl'), 'utf8'))
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l) as EpisodeRow);
    const lines = (await readFile(join(r.unit, 'traces/frames.jsonl'), 'utf8'))
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l) as RecordedEpisode);
    expect(filmstrips(r.adjudication, rows, lines, ['A', 'S', 'T']).pairs.length).toBeGreaterThan(0);
    const moved = lines.map((l, i) => (i === 0 ? { ...l, seed: l.seed + 1 } : l));
    expect(() => filmstrips(r.adjudication, rows, moved, ['A', 'S', 'T'])).toThrow(
      /names another episode than the row/,
    );
  });
});
