/**
 * End to end in real headless Chromium: the gateway in-process with the web chat and the bundled
 * demo agent as a real ACP subprocess; the page is driven like a user would.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { chromium } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseConfig } from "../../src/gateway/config.js";
import { Gateway } from "../../src/gateway/gateway.js";
import { MemoryLogger } from "../../src/messaging/base/logger.js";
import { webchatChannel } from "../../src/webchat/index.js";

let gateway: Gateway;
let browser: Browser;
let url = "";

beforeAll(async () => {
  process.env.DEMO_AGENT_SPEED = "2";
  const announced: string[] = [];
  gateway = await Gateway.start({
    config: parseConfig({ webchat: { port: 0 } }, {}),
    env: {},
    home: mkdtempSync(join(tmpdir(), "parley-e2e-")),
    logger: new MemoryLogger(),
    announce: (l) => announced.push(l),
    channels: [webchatChannel],
  });
  url = (announced[0] ?? "").replace("parley web chat: ", "");
  browser = await chromium.launch({
    executablePath: "/usr/bin/chromium",
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-background-networking",
      "--no-first-run",
    ],
  });
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await gateway?.shutdown();
});

async function openChat(conversation: string): Promise<Page> {
  const page = await browser.newPage();
  await page.goto(`${url}&c=${conversation}`);
  await page
    .getByTestId("connection")
    .filter({ hasText: /^connected$/ })
    .waitFor();
  return page;
}

async function say(page: Page, text: string): Promise<void> {
  await page.getByTestId("input").fill(text);
  await page.getByTestId("send").click();
}

const lastAssistant = (page: Page) => page.locator('[data-role="assistant"][data-final="true"]').last();

describe("web chat in Chromium", () => {
  it("streams an answer with a rendered code block, then a table", async () => {
    const page = await openChat("e2e-render");
    await say(page, "hello");
    await expect
      .poll(() => lastAssistant(page).locator("pre code").count(), { timeout: 15_000 })
      .toBeGreaterThan(0);
    await say(page, "table");
    await expect
      .poll(() => page.locator('[data-role="assistant"] table').count(), { timeout: 15_000 })
      .toBeGreaterThan(0);
    const status = await lastAssistant(page).getByTestId("status").textContent();
    expect(status).toMatch(/^Finished in /);
    // The first good exchange named the conversation (a real naming turn on the demo agent).
    await expect.poll(() => page.getByTestId("title").textContent(), { timeout: 15_000 }).toBe("About hello");
    expect(await page.title()).toBe("About hello · parley");
    await page.close();
  }, 40_000);

  it("approves a tool through the button and the agent reports the approval", async () => {
    const page = await openChat("e2e-tool");
    await say(page, "tool");
    const approve = page.getByTestId("approval-button").first();
    await approve.waitFor({ timeout: 15_000 });
    await approve.click();
    await expect
      .poll(() => page.locator('[data-role="assistant"]').allTextContents(), { timeout: 15_000 })
      .toEqual(expect.arrayContaining([expect.stringContaining("Permission approved")]));
    await expect
      .poll(() => page.locator('[data-role="approval"]').getByTestId("status").textContent())
      .toBe("✅ Approved (this once)");
    await page.close();
  }, 40_000);

  it("an option chip is sent back as the user's message and answered", async () => {
    const page = await openChat("e2e-options");
    await say(page, "options");
    const chip = page.getByTestId("chip").first();
    await chip.waitFor({ timeout: 15_000 });
    const label = (await chip.textContent()) ?? "";
    await chip.click();
    await expect
      .poll(async () => (await page.locator('[data-role="user"]').allTextContents()).map((t) => t.trim()), {
        timeout: 10_000,
      })
      .toEqual(expect.arrayContaining([label.trim()]));
    await page.close();
  }, 40_000);

  it("a message sent mid-turn gets a queue receipt that flips to Now answering", async () => {
    const page = await openChat("e2e-queue");
    await say(page, "tool"); // the turn waits on the approval: a stable mid-turn window
    await page.getByTestId("approval-button").first().waitFor({ timeout: 15_000 });
    await say(page, "/queue hello again");
    const receipt = page.locator('[data-role="receipt"]').last();
    await expect
      .poll(() => receipt.textContent(), { timeout: 10_000 })
      .toContain('⏳ Queued (1): "hello again"');
    await page.getByTestId("approval-button").first().click();
    await expect
      .poll(() => receipt.textContent(), { timeout: 15_000 })
      .toContain('▶️ Now answering (1): "hello again"');
    await page.close();
  }, 40_000);

  it("/stop ends a slow turn", async () => {
    const page = await openChat("e2e-stop");
    await say(page, "slow");
    await page.locator('[data-role="assistant"]').last().locator("p").first().waitFor({ timeout: 15_000 });
    await say(page, "/stop");
    await expect
      .poll(() => page.locator('[data-role="system"]').allTextContents(), { timeout: 10_000 })
      .toEqual(expect.arrayContaining([expect.stringContaining("Stopping the current turn")]));
    await expect
      .poll(() => lastAssistant(page).getByTestId("status").textContent(), { timeout: 15_000 })
      .toMatch(/^🛑 Stopped/);
    await page.close();
  }, 40_000);

  it("/model 2 switches the demo agent to Demo Deep, and /model then lists it as current", async () => {
    const page = await openChat("e2e-model");
    const system = () => page.locator('[data-role="system"]').allTextContents();
    await say(page, "/model 2");
    await expect
      .poll(system, { timeout: 15_000 })
      .toEqual(expect.arrayContaining([expect.stringContaining("✅ Model: Demo Deep")]));
    await say(page, "/model");
    await expect
      .poll(system, { timeout: 10_000 })
      .toEqual(expect.arrayContaining([expect.stringContaining("Demo Deep ✓")]));
    await page.close();
  }, 40_000);

  it("a text file attached through the file input reaches the agent, and the user's bubble names it", async () => {
    const page = await openChat("e2e-files");
    const consoleErrors: string[] = [];
    page.on("console", (m) => {
      if (m.type() === "error") consoleErrors.push(m.text());
    });
    await page.getByTestId("file-input").setInputFiles({
      name: "scenario.txt",
      mimeType: "text/plain",
      buffer: Buffer.from("Please answer with a table.\n"),
    });
    // A second file dropped onto the composer joins it as a chip, and its × takes it off again.
    // (A string: the test's TypeScript has no DOM types; this runs in the page.)
    const dropped = await page.evaluateHandle(
      `(() => { const dt = new DataTransfer(); dt.items.add(new File(["say slow"], "dropped.txt", { type: "text/plain" })); return dt; })()`,
    );
    await page.dispatchEvent("#composer", "drop", { dataTransfer: dropped });
    const chips = () => page.getByTestId("pending-file").allTextContents();
    await expect
      .poll(chips)
      .toEqual([expect.stringContaining("scenario.txt"), expect.stringContaining("dropped.txt")]);
    await page.getByTestId("remove-file").last().click();
    await expect.poll(chips).toEqual([expect.stringContaining("scenario.txt")]);
    await page.getByTestId("send").click(); // no caption: a message may be files only
    await expect
      .poll(() => page.locator('[data-role="user"]').last().getByTestId("bubble-file").allTextContents(), {
        timeout: 10_000,
      })
      .toEqual(["📎 scenario.txt"]);
    await expect.poll(() => page.getByTestId("pending-file").count()).toBe(0);
    // The demo agent picks its answer from the words of its prompt, and only the file says "table":
    // a table proves the file's content crossed the shared ingest into the agent's prompt.
    await expect
      .poll(() => lastAssistant(page).locator("table").count(), { timeout: 15_000 })
      .toBeGreaterThan(0);
    expect(await lastAssistant(page).getByTestId("status").textContent()).toMatch(/^Finished in /);
    // ...and the agent names the file it was handed as a link.
    expect(await lastAssistant(page).textContent()).toContain("📎 I received one file: scenario.txt.");
    expect(consoleErrors).toEqual([]); // no CSP violation, no script error
    await page.close();
  }, 40_000);

  it("a reload restores the conversation", async () => {
    const page = await openChat("e2e-render");
    await expect
      .poll(() => page.locator('[data-role="user"]').count(), { timeout: 5_000 })
      .toBeGreaterThanOrEqual(2);
    await page.close();
  });

  it("the token leaves the address bar after load; a reload still works from the cookie", async () => {
    const page = await openChat("e2e-token");
    expect(page.url()).not.toContain("token=");
    expect(new URL(page.url()).searchParams.get("c")).toBe("e2e-token");
    await page.reload();
    await page
      .getByTestId("connection")
      .filter({ hasText: /^connected$/ })
      .waitFor();
    expect(page.url()).not.toContain("token=");
    // No console error on load: the favicon is served without the token.
    const errors: string[] = [];
    page.on("console", (m) => {
      if (m.type() === "error") errors.push(m.text());
    });
    await page.reload();
    await page
      .getByTestId("connection")
      .filter({ hasText: /^connected$/ })
      .waitFor();
    expect(errors).toEqual([]);
    await page.close();
  });
});
