// Open a catalog page in headless Chromium (Debian's) and measure its service
// diagram (svg.service-map) at 1280 px and at 390 px width: the bounding box of
// every service and channel name, label and box, the pairs of them that
// overlap, the size the text renders at (its computed font size times the
// scale the SVG is drawn at), whether the page scrolls sideways, and a
// screenshot of each width.
// Usage: node check-diagram.mjs PAGE ARTIFACTS_DIR [CHROMIUM]
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { chromium } from "playwright-core";

const [file, artifacts, executablePath = "/usr/bin/chromium"] = process.argv.slice(2);
mkdirSync(artifacts, { recursive: true });

function measure() {
  const svg = document.querySelector("svg.service-map");
  if (!svg) return null;
  const box = svg.getBoundingClientRect();
  const scale = box.width / svg.viewBox.baseVal.width;
  const rect = (element) => {
    const r = element.getBoundingClientRect();
    return { left: r.left, top: r.top, right: r.right, bottom: r.bottom, width: r.width, height: r.height };
  };
  // Everything that must not overlap: the boxes, and the texts (names, details, arrow labels).
  const items = Array.from(svg.querySelectorAll("[data-box], text")).map((element) => ({
    kind: element.tagName.toLowerCase() === "text" ? "text" : "box",
    role: element.getAttribute("class") || "",
    text: element.textContent,
    owner: element.closest("[data-node]")?.getAttribute("data-node") || null,
    rect: rect(element),
    fontSize: element.tagName.toLowerCase() === "text" ? parseFloat(getComputedStyle(element).fontSize) * scale : null,
  }));
  const overlaps = [];
  for (let i = 0; i < items.length; i++) {
    for (let j = i + 1; j < items.length; j++) {
      const a = items[i], b = items[j];
      // A node's own texts sit inside its own box: that is no overlap.
      if (a.owner && a.owner === b.owner && (a.kind === "box" || b.kind === "box")) continue;
      const x = Math.min(a.rect.right, b.rect.right) - Math.max(a.rect.left, b.rect.left);
      const y = Math.min(a.rect.bottom, b.rect.bottom) - Math.max(a.rect.top, b.rect.top);
      if (x > 0.5 && y > 0.5) overlaps.push([a.text, b.text]);
    }
  }
  // Texts outside their node's box (a name too long for it).
  const outside = [];
  for (const node of svg.querySelectorAll("[data-node]")) {
    const frame = node.querySelector("[data-box]");
    if (!frame) continue;
    const f = frame.getBoundingClientRect();
    for (const text of node.querySelectorAll("text")) {
      const t = text.getBoundingClientRect();
      if (t.left < f.left - 0.5 || t.right > f.right + 0.5 || t.top < f.top - 0.5 || t.bottom > f.bottom + 0.5) {
        outside.push(text.textContent);
      }
    }
  }
  const names = Array.from(svg.querySelectorAll("[data-name]")).map((element) => ({
    name: element.getAttribute("data-name"),
    kind: element.closest("[data-node]").getAttribute("data-kind"),
    text: element.textContent,
    rect: rect(element),
  }));
  const scroller = svg.closest(".scroll");
  return {
    scale,
    width: box.width,
    items: items.length,
    overlaps,
    outside,
    names,
    minFont: Math.min(...items.filter((item) => item.fontSize !== null).map((item) => item.fontSize)),
    title: svg.querySelector(":scope > title")?.textContent || "",
    desc: svg.querySelector(":scope > desc")?.textContent || "",
    links: Array.from(svg.querySelectorAll("a")).map((a) => a.getAttribute("href")),
    scrolls: scroller ? scroller.scrollWidth > scroller.clientWidth : false,
    pageOverflow: document.documentElement.scrollWidth > window.innerWidth + 1,
  };
}

const browser = await chromium.launch({
  executablePath,
  args: ["--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
         "--disable-component-update", "--disable-sync"],
});
const page = await browser.newPage();
const errors = [];
page.on("console", (message) => { if (message.type() === "error") errors.push(message.text()); });
page.on("pageerror", (error) => errors.push(String(error)));
const report = { errors };
for (const [name, width, height] of [["desktop", 1280, 900], ["phone", 390, 844]]) {
  await page.setViewportSize({ width, height });
  await page.goto(pathToFileURL(file).href);
  await page.waitForLoadState("load");
  report[name] = await page.evaluate(measure);
  await page.locator("svg.service-map").first().evaluate((element) => element.scrollIntoView());
  await page.screenshot({ path: join(artifacts, `service-map-${name}.png`), fullPage: false });
}
await browser.close();
process.stdout.write(JSON.stringify(report, null, 2));
