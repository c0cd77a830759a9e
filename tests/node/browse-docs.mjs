// Open every page of a docs site in headless Chromium (Debian's), report
// console errors, exercise the search box and save screenshots.
// Usage: node browse-docs.mjs DOCS_DIR ARTIFACTS_DIR [CHROMIUM]
import { readdirSync, statSync, mkdirSync } from "node:fs";
import { join, relative } from "node:path";
import { pathToFileURL } from "node:url";
import { chromium } from "playwright-core";

const [docs, artifacts, executablePath = "/usr/bin/chromium"] = process.argv.slice(2);
mkdirSync(artifacts, { recursive: true });

function pages(dir) {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return name === "markdown" ? [] : pages(path);
    return name.endsWith(".html") ? [path] : [];
  });
}

const browser = await chromium.launch({
  executablePath,
  args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
         "--disable-component-update", "--disable-sync"],
});
const report = { pages: {}, search: {}, screenshots: [] };
const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
const page = await context.newPage();
let errors = [];
page.on("console", (message) => { if (message.type() === "error") errors.push(message.text()); });
page.on("pageerror", (error) => errors.push(String(error)));
page.on("requestfailed", (request) => errors.push(`request failed: ${request.url()}`));
const dialogs = [];
page.on("dialog", async (dialog) => { dialogs.push(dialog.message()); await dialog.dismiss(); });

for (const file of pages(docs).sort()) {
  errors = [];
  await page.goto(pathToFileURL(file).href);
  await page.waitForLoadState("load");
  report.pages[relative(docs, file)] = { errors, title: await page.title() };
}
report.dialogs = dialogs;

const index = pathToFileURL(join(docs, "index.html")).href;
await page.goto(index);
const total = await page.locator(".event-row").count();
await page.fill("#search", process.env.SEARCH_QUERY || "meter");
const shown = await page.locator(".event-row:not([hidden])").count();
await page.fill("#search", "no-such-event-anywhere-xyz");
const none = await page.locator(".event-row:not([hidden])").count();
const emptyVisible = await page.locator("#no-results").isVisible();
await page.fill("#search", "");
const restored = await page.locator(".event-row:not([hidden])").count();
report.search = { total, shown, none, emptyVisible, restored };

const firstEvent = pages(join(docs, "events")).sort()[0];
for (const [name, width, height] of [["desktop", 1280, 900], ["phone", 390, 844]]) {
  await page.setViewportSize({ width, height });
  for (const [label, target] of [["index", index], ["event", pathToFileURL(firstEvent).href]]) {
    await page.goto(target);
    const path = join(artifacts, `${label}-${name}.png`);
    await page.screenshot({ path, fullPage: false });
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth > window.innerWidth + 1);
    report.screenshots.push({ path, overflow });
  }
}
await browser.close();
process.stdout.write(JSON.stringify(report, null, 2));
