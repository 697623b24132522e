// Drives Debian's chromium with playwright-core (never a downloaded browser), each page in a fresh
// profile in the OS temp dir. Shared by the viewer tests and the CLI's end-to-end `run --serve` test.
import { existsSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chromium, type Page } from "playwright-core";

export const CHROMIUM_ARGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

export function chromiumPath(): string {
  const candidates = [process.env["SPOOL_CHROMIUM"], "/usr/bin/chromium", "/usr/bin/chromium-browser"];
  for (const c of candidates) if (c && existsSync(c)) return c;
  throw new Error("chromium not found: install Debian's chromium (`apt-get install -y chromium`, as .ci/run does) or set SPOOL_CHROMIUM to its path");
}

export interface OpenedPage {
  readonly page: Page;
  /** Uncaught errors and console errors the page reported. */
  readonly errors: string[];
  close(): Promise<void>;
}

/** Open `url` in a fresh headless chromium and wait for it to load. Always call close(). */
export async function openPage(url: string, viewport = { width: 1280, height: 800 }): Promise<OpenedPage> {
  const profile = await mkdtemp(join(tmpdir(), "spool-chromium-"));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: chromiumPath(),
    headless: true,
    args: CHROMIUM_ARGS,
    viewport,
  });
  const close = async (): Promise<void> => {
    await context.close().catch(() => {});
    await rm(profile, { recursive: true, force: true });
  };
  try {
    const page = context.pages()[0] ?? (await context.newPage());
    const errors: string[] = [];
    page.on("pageerror", (e) => errors.push(`pageerror: ${e.message}`));
    page.on("console", (m) => {
      if (m.type() === "error") errors.push(`console: ${m.text()}`);
    });
    await page.goto(url, { waitUntil: "load" });
    return { page, errors, close };
  } catch (err) {
    await close();
    throw err;
  }
}

/** Geometry of the viewer's output box, read in the page. */
export interface ScrollInfo {
  readonly top: number;
  readonly height: number;
  readonly client: number;
  readonly atBottom: boolean;
}

export async function outputScroll(page: Page): Promise<ScrollInfo> {
  return page.$eval("#output-scroll", (el) => ({
    top: el.scrollTop,
    height: el.scrollHeight,
    client: el.clientHeight,
    atBottom: el.scrollHeight - el.scrollTop - el.clientHeight <= 8,
  }));
}

/** Is `needle` inside the output box's visible rectangle right now (not merely in the DOM)? */
export async function outputShows(page: Page, needle: string): Promise<boolean> {
  return page.$eval(
    "#output",
    (pre, text) => {
      const node = pre.firstChild;
      if (!node || node.nodeType !== Node.TEXT_NODE) return false;
      const at = (node.textContent ?? "").lastIndexOf(text);
      if (at < 0) return false;
      const range = document.createRange();
      range.setStart(node, at);
      range.setEnd(node, at + text.length);
      const r = range.getBoundingClientRect();
      // The scroller's client area: its rectangle minus borders and the horizontal scrollbar.
      const scroller = pre.parentElement!;
      const top = scroller.getBoundingClientRect().top + scroller.clientTop;
      return r.height > 0 && r.top >= top && r.bottom <= top + scroller.clientHeight;
    },
    needle,
  );
}

export async function outputText(page: Page): Promise<string> {
  return page.$eval("#output", (pre) => pre.textContent ?? "");
}
