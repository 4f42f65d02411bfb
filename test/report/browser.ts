/**
 * Opens a report in headless Chromium (the Debian package at /usr/bin/chromium, installed by
 * scripts/setup-system.sh) through playwright-core — never a downloaded browser build — and reports what
 * rendered: per figure, the number of SVG mark elements; every console error and failed request; and a
 * full-page screenshot.
 */
import { existsSync } from 'node:fs';
import { chromium } from 'playwright-core';

export const CHROMIUM = '/usr/bin/chromium';
export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

export function chromiumAvailable(): boolean {
  return existsSync(CHROMIUM);
}

export interface PageReport {
  readonly figures: { id: string; svgs: number; marks: number }[];
  readonly consoleErrors: string[];
  readonly requests: string[];
  readonly scripts: number;
  readonly title: string;
}

export async function inspectReport(htmlPath: string, screenshot: string): Promise<PageReport> {
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS, headless: true });
  try {
    const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
    const consoleErrors: string[] = [];
    const requests: string[] = [];
    page.on('console', (m) => {
      if (m.type() === 'error') consoleErrors.push(m.text());
    });
    page.on('pageerror', (e) => consoleErrors.push(String(e)));
    page.on('request', (r) => {
      if (!r.url().startsWith('file://')) requests.push(r.url());
    });
    page.on('requestfailed', (r) => consoleErrors.push(`request failed: ${r.url()}`));
    await page.goto(`file://${htmlPath}`, { waitUntil: 'load' });
    const figures = await page.$$eval('figure[data-figure]', (els) =>
      els.map((el) => ({
        id: el.getAttribute('data-figure') ?? '',
        svgs: el.querySelectorAll('svg').length,
        marks: el.querySelectorAll('svg .role-mark > *, svg .forest-mark').length,
      })),
    );
    const scripts = await page.$$eval('script', (els) => els.length);
    const title = await page.title();
    await page.screenshot({ path: screenshot, fullPage: true });
    return { figures, consoleErrors, requests, scripts, title };
  } finally {
    await browser.close();
  }
}
