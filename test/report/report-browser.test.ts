/**
 * report.html of a real small campaign with frames (protocols/shellgame-donor-swap.yaml at 48 seeds instead of 200,
 * run through closeout), loaded in Debian's headless Chromium (/usr/bin/chromium through playwright-core): the
 * verdict figure (the forest plot) is the first figure in document order, every <img> loaded (naturalWidth > 0),
 * every SVG figure rendered with a non-empty box and marks, and each filmstrip frame carries an overlay of what the
 * policy did — the tool's path and the step's action, drawn over the blacked-out frames too. The sections come in
 * one order everywhere: report.html, report.md and the list in docs/campaigns.md "Reports".
 */
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chromium } from 'playwright-core';
import { runThrough } from '../../src/app/pipeline.js';
import { writeReport } from '../../src/report/write-report.js';
import { removeTree, tempDir } from '../evidence/helpers.js';
import { ROOT } from '../campaign/helpers.js';
import { CHROMIUM, CHROMIUM_ARGS } from './browser.js';

let root: string;
let written: Awaited<ReturnType<typeof writeReport>>;

beforeAll(async () => {
  root = await tempDir('imep-report-browser-');
  const text = (await readFile(join(ROOT, 'protocols/shellgame-donor-swap.yaml'), 'utf8'))
    .replace('- { start: 611000, end: 611199 }', '- { start: 611000, end: 611047 }')
    .replace(/^n: 200$/m, 'n: 48');
  expect(text).toContain('n: 48');
  const file = join(root, 'shellgame-donor-swap.yaml');
  await writeFile(file, text);
  const unit = await runThrough(file, {
    campaignsDir: join(root, 'campaigns'),
    root: ROOT,
    progress: null,
    say: () => undefined,
    operator: { id: 'report-browser-test', source: 'explicit' },
    through: 'closeout',
    sameOperatorReason: 'report browser test',
  });
  written = await writeReport(unit, { outDir: join(root, 'report') });
}, 300_000);
afterAll(async () => removeTree(root));

interface Seen {
  readonly figures: string[];
  readonly sections: string[];
  readonly images: { src: string; natural: number }[];
  readonly svgFigures: { id: string; width: number; height: number; children: number }[];
  readonly overlays: { step: number; drawn: string; path: number; tool: number; action: number }[];
  readonly blackout: { step: number; path: number }[];
  readonly actionCaptions: string[];
}

describe('report.html in headless Chromium', () => {
  it('opens with the forest plot; every image loads, every figure renders, the frames show what the policy did', async () => {
    const browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS, headless: true });
    let seen: Seen;
    const errors: string[] = [];
    try {
      const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
      page.on('pageerror', (e) => errors.push(String(e)));
      page.on('requestfailed', (r) => errors.push(`request failed: ${r.url()}`));
      await page.goto(`file://${written.html}`, { waitUntil: 'load' });
      const overlays = await page.$$eval('svg.overlay', (els) =>
        els.map((o) => ({
          step: Number(o.getAttribute('data-step')),
          drawn: o.getAttribute('data-drawn') ?? '',
          path: o.querySelectorAll('polyline.path').length,
          tool: o.querySelectorAll('circle.tool').length,
          action: o.querySelectorAll('.action').length,
        })),
      );
      seen = {
        figures: await page.$$eval('figure', (els) => els.map((f) => f.getAttribute('data-figure') ?? '')),
        sections: await page.$$eval('section > h2', (els) => els.map((h) => h.textContent ?? '')),
        images: await page.$$eval('img', (els) =>
          els.map((i) => {
            const img = i as unknown as { complete: boolean; naturalWidth: number };
            return { src: i.getAttribute('src') ?? '', natural: img.complete ? img.naturalWidth : 0 };
          }),
        ),
        svgFigures: await page.$$eval('figure', (els) =>
          els.map((f) => {
            const svg = f.querySelector('svg');
            const box = svg?.getBoundingClientRect();
            return {
              id: f.getAttribute('data-figure') ?? '',
              width: box?.width ?? 0,
              height: box?.height ?? 0,
              children: svg?.querySelectorAll('*').length ?? 0,
            };
          }),
        ),
        overlays,
        // the frames from the blackout on (ShellGame's blackoutFromStep: 6)
        blackout: overlays.filter((o) => o.step >= 6).map((o) => ({ step: o.step, path: o.path })),
        actionCaptions: await page.$$eval('span.act', (els) => els.map((x) => x.textContent ?? '')),
      };
      await page.screenshot({ path: join(root, 'report.png'), fullPage: true });
    } finally {
      await browser.close();
    }
    expect(errors).toEqual([]);
    // the verdict figure first, then the descriptive ones
    expect(seen.figures[0]).toBe('forest');
    expect(seen.figures.length).toBeGreaterThan(1);
    expect(seen.sections.slice(0, 2)).toEqual(['The verdict figure', 'Verdicts']);
    // every image loaded (the filmstrip frames are files beside report.html)
    expect(seen.images.length).toBeGreaterThan(0);
    for (const i of seen.images) expect(i.natural, i.src).toBeGreaterThan(0);
    // every SVG figure rendered non-empty
    for (const f of seen.svgFigures) {
      expect(f.width, f.id).toBeGreaterThan(50);
      expect(f.height, f.id).toBeGreaterThan(50);
      expect(f.children, f.id).toBeGreaterThan(5);
    }
    // one overlay per frame: ShellGame-lite declares toolPosition as tool_xy, so the tool's path is drawn
    expect(seen.overlays.length).toBe(seen.images.length);
    expect(seen.overlays.every((o) => o.drawn === 'track' && o.tool === 1)).toBe(true);
    expect(seen.overlays.some((o) => o.action > 0)).toBe(true);
    // after the blackout (step 6 on) the frames are black; the path still shows what the policy did
    expect(seen.blackout.length).toBeGreaterThan(0);
    expect(seen.blackout.every((o) => o.path > 0)).toBe(true);
    expect(seen.actionCaptions.length).toBe(seen.images.length);
    expect(seen.actionCaptions.some((c) => /^a = \(−?\d/.test(c))).toBe(true);
  }, 120_000);

  it('one section order everywhere: report.html, report.md and docs/campaigns.md "Reports"', async () => {
    const html = await readFile(written.html, 'utf8');
    const md = await readFile(written.markdown, 'utf8');
    const htmlTitles = [...html.matchAll(/<section id="[^"]+"><h2>([^<]+)<\/h2>/g)].map((m) => m[1]!);
    const mdTitles = [...md.matchAll(/^## (.+)$/gm)].map((m) => m[1]!);
    expect(mdTitles).toEqual(htmlTitles.map((t) => t.replace(/&amp;/g, '&')));
    expect(htmlTitles.slice(0, 3)).toEqual(['The verdict figure', 'Verdicts', 'What was tested']);
    // the docs list the sections in the report's order (each bullet's bold title is a section title or a run of them)
    const docs = await readFile(join(ROOT, 'docs/campaigns.md'), 'utf8');
    const reports = docs.slice(docs.indexOf('## Reports'), docs.indexOf('\n## ', docs.indexOf('## Reports') + 1));
    const listed = [...reports.matchAll(/^- \*\*([^*]+)\*\*/gm)].map((m) => m[1]!);
    expect(listed.length).toBeGreaterThan(5);
    const at = listed.map((t) => htmlTitles.indexOf(t));
    expect(
      at.every((i) => i >= 0),
      `docs titles ${JSON.stringify(listed)} vs ${JSON.stringify(htmlTitles)}`,
    ).toBe(true);
    expect([...at].sort((x, y) => x - y)).toEqual(at);
  });
});
