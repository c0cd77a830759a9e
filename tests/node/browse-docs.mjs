// Open every page of a docs site in headless Chromium (Debian's): report
// console errors, the text of each page, words broken inside at 1280 px (and
// inside tables at 390 px), horizontal overflow, the search and the copy
// buttons; save screenshots.
// Usage: node browse-docs.mjs DOCS_DIR ARTIFACTS_DIR [CHROMIUM]
// Environment: SEARCH_QUERY (a field name), SEARCH_EXPECT (a page the search must find).
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

// Words (runs of letters and digits) whose text spans more than one line box.
function brokenWords(selector) {
  const broken = [];
  const word = /[\p{L}\p{N}]+/gu;
  for (const root of document.querySelectorAll(selector)) {
    const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      const element = node.parentElement;
      if (!element || element.closest("svg, [hidden]") || element.getClientRects().length === 0) continue;
      for (const match of node.data.matchAll(word)) {
        if (match[0].length < 2) continue;
        const range = document.createRange();
        range.setStart(node, match.index);
        range.setEnd(node, match.index + match[0].length);
        const tops = new Set(Array.from(range.getClientRects()).filter((r) => r.width > 0).map((r) => Math.round(r.top)));
        if (tops.size > 1) broken.push(match[0]);
      }
    }
  }
  return broken;
}

const browser = await chromium.launch({
  executablePath,
  args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
         "--disable-component-update", "--disable-sync"],
});
const report = { pages: {}, search: {}, copy: {}, screenshots: [] };
const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
await context.grantPermissions(["clipboard-read", "clipboard-write"]).catch(() => {});
const page = await context.newPage();
let errors = [];
page.on("console", (message) => { if (message.type() === "error") errors.push(message.text()); });
page.on("pageerror", (error) => errors.push(String(error)));
page.on("requestfailed", (request) => errors.push(`request failed: ${request.url()}`));
const dialogs = [];
page.on("dialog", async (dialog) => { dialogs.push(dialog.message()); await dialog.dismiss(); });

const all = pages(docs).sort();
for (const file of all) {
  errors = [];
  await page.goto(pathToFileURL(file).href);
  await page.waitForLoadState("load");
  const text = await page.locator("main").innerText();
  const broken = await page.evaluate(brokenWords, "main");
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth > window.innerWidth + 1);
  report.pages[relative(docs, file)] = { errors, title: await page.title(), text, broken, overflow };
}
report.dialogs = dialogs;

// At phone width: no page scrolls sideways, and no word inside a table is broken (tables scroll instead).
await page.setViewportSize({ width: 390, height: 844 });
report.phone = {};
for (const file of all) {
  await page.goto(pathToFileURL(file).href);
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth > window.innerWidth + 1);
  const broken = await page.evaluate(brokenWords, "main table");
  report.phone[relative(docs, file)] = { overflow, broken };
}
await page.setViewportSize({ width: 1280, height: 900 });

const index = pathToFileURL(join(docs, "index.html")).href;
await page.goto(index);
const query = process.env.SEARCH_QUERY || "meter";
await page.fill("#search-input", query);
const found = await page.locator("#search-results a").evaluateAll((links) => links.map((a) => a.getAttribute("href")));
const foundStatus = await page.locator("#search-status").innerText();
await page.fill("#search-input", "no-such-event-anywhere-xyz");
const none = await page.locator("#search-results a").count();
const noneStatus = await page.locator("#search-status").innerText();
const noneHidden = await page.locator("#search-results").isHidden();
await page.fill("#search-input", "");
const cleared = await page.locator("#search-results").isHidden();
report.search = { query, found, foundStatus, none, noneStatus, noneHidden, cleared };
await page.fill("#search-input", query);
await page.screenshot({ path: join(artifacts, "search-desktop.png"), fullPage: false });

// The copy button of the first example: the clipboard then holds the example.
for (const file of all.filter((f) => f.includes("/events/"))) {
  await page.goto(pathToFileURL(file).href);
  const button = page.locator("button.copy").first();
  if ((await button.count()) === 0) continue;
  const visible = await button.isVisible();
  const target = await button.getAttribute("data-copy");
  const expected = await page.locator(`[id="${target}"]`).innerText();
  await button.click();
  await page.waitForFunction(() => document.querySelector("button.copy[data-state]") !== null, null, { timeout: 5000 })
    .catch(() => {});
  const state = await button.getAttribute("data-state");
  const clipboard = await page.evaluate(() => navigator.clipboard.readText()).catch((error) => `unreadable: ${error}`);
  report.copy = { page: relative(docs, file), visible, state, same: clipboard.trim() === expected.trim() };
  break;
}

const eventPages = all.filter((file) => file.includes("/events/"));
const biggest = eventPages.sort((a, b) => statSync(b).size - statSync(a).size)[0];
const catalogPage = all.filter((file) => file.includes("/catalogs/")).sort()[0];
const schemaPage = all.filter((file) => file.includes("/schemas/")).sort()[0];
const shots = [
  ["index", join(docs, "index.html"), null], ["catalog", catalogPage, null], ["timeline", catalogPage, ".timeline"],
  ["event", biggest, null], ["payload", biggest, "table.payload"], ["example", biggest, ".code-head"],
  ["schema", schemaPage, null],
];
for (const [name, width, height] of [["desktop", 1280, 900], ["phone", 390, 844]]) {
  await page.setViewportSize({ width, height });
  for (const [label, file, anchor] of shots) {
    if (!file) continue;
    await page.goto(pathToFileURL(file).href);
    if (anchor) await page.locator(anchor).first().evaluate((element) => element.scrollIntoView());
    const path = join(artifacts, `${label}-${name}.png`);
    await page.screenshot({ path, fullPage: false });
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth > window.innerWidth + 1);
    report.screenshots.push({ path, overflow });
  }
}
await browser.close();
process.stdout.write(JSON.stringify(report, null, 2));
