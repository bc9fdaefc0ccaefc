/**
 * The kit's LiveRenderer options a platform that converts tables or uploads a message's files with
 * it turns on (all off by default): tables presented before the cut (`presentFirst`), a live frame
 * held while a table grows, files riding the seal's last message (a LiveFiles without `send`), and
 * a renderer closed before any turn began.
 */
import { describe, expect, it } from "vitest";
import { MemoryLogger } from "../../../src/messaging/base/logger.js";
import { LiveRenderer } from "../../../src/messaging/channel/live-renderer.js";
import { liveSplitter } from "../../../src/messaging/channel/live-segments.js";
import type { LiveFiles, LiveMessage, LiveSurface } from "../../../src/messaging/channel/live-surface.js";
import { ManualClock } from "../../helpers/manual-clock.js";

type Call = { op: "post" | "edit"; id: string; message: LiveMessage<string[]> };

function surfaceOf(files?: LiveFiles) {
  const calls: Call[] = [];
  const surface: LiveSurface<string[]> = {
    capabilities: {
      maxMessageChars: 1000,
      tableMode: "auto",
      nativeTables: false,
    } as LiveSurface<string[]>["capabilities"],
    sourceCap: 600,
    commands: { new: "/new", stop: "/stop" },
    plain: (t) => t,
    quiet: (t) => `_${t}_`,
    decided: (head, outcome) => `${head}\n${outcome}`,
    promptHead: (title) => `Permission: ${title}`,
    promptBody: (head, hint) => `${head}\n${hint}`,
    fit: (source) => (source.trim() ? [source] : []),
    join: (body, footer) => (body && footer ? `${body}\n${footer}` : body || footer),
    fits: (body) => body.length <= 1000,
    post: async (message) => {
      calls.push({ op: "post", id: String(calls.length + 1), message });
      return String(calls.length);
    },
    edit: async (id, message) => {
      calls.push({ op: "edit", id, message });
    },
    refused: () => false,
    options: (choices) => [...choices],
    approval: (_r, _n, options) => ({ widgets: undefined, shown: options }),
    noWidgets: [],
    files,
  };
  return { surface, calls };
}

function rendererOf(surface: LiveSurface<string[]>, clock: ManualClock, more: object = {}) {
  return new LiveRenderer<string[]>({
    channel: "test",
    surface,
    timers: clock,
    now: () => clock.now(),
    logger: new MemoryLogger(),
    throttleMs: 100,
    ...more,
  });
}

const table = (rows: number) =>
  `| item | value | state |\n|---|---|---|\n${Array.from({ length: rows }, (_, i) => `| item${i} | ${"x".repeat(10)} | ok |`).join("\n")}\n`;

describe("presentFirst: tables presented before the cut", () => {
  it("a table longer than a message arrives as cards in every message, no row left raw", async () => {
    const clock = new ManualClock();
    const { surface, calls } = surfaceOf();
    const r = rendererOf(surface, clock, { presentFirst: true });
    await r.onTurnStart();
    await r.onTextChunk(`${table(60)}\nEnd.`);
    await r.onDone("end_turn");
    await r.close();
    const bodies = calls.map((c) => c.message.body);
    expect(bodies.length).toBeGreaterThan(1);
    for (const body of bodies) expect(body).not.toMatch(/^\| item\d+ \|/m);
    for (let i = 0; i < 60; i++) expect(bodies.join("\n")).toContain(`item${i}`);
    expect(bodies.at(-1)).toMatch(/End\.\n_.*Finished/);
  });

  it("holds the live frame while a table grows, and shows it once the table is done", async () => {
    const clock = new ManualClock();
    const { surface, calls } = surfaceOf();
    const r = rendererOf(surface, clock, { presentFirst: true });
    await r.onTurnStart();
    await r.onTextChunk(`Results:\n\n${table(2)}`);
    await clock.advance(1000);
    expect(calls).toEqual([]);
    await r.onTextChunk("\nThat is all.");
    await clock.advance(1000);
    expect(calls.at(-1)?.message.live).toBe(true);
    expect(calls.at(-1)?.message.body).toContain("That is all.");
    await r.onDone("end_turn");
    await r.close();
  });

  it("keeps room for the steer chip in each chunk, like the streaming splitter", () => {
    const long = `${"word ".repeat(300)}\n`;
    for (const present of [false, true]) {
      const split = liveSplitter(600, 100, present);
      const chunks = [...split.append(long), ...split.finish()];
      for (const chunk of chunks) expect(Array.from(chunk).length).toBeLessThanOrEqual(500);
    }
  });
});

describe("files that ride the message (a LiveFiles without send)", () => {
  const files: LiveFiles = {
    hide: (source) => source.replace(/!\[[^\]]*\]\([^)]*\)/g, ""),
    extract: async (source) => {
      const found = [...source.matchAll(/!\[[^\]]*\]\(([^)]*)\)/g)].map((m) => m[1]);
      return { text: source.replace(/!\[[^\]]*\]\([^)]*\)/g, "").trim(), files: found };
    },
  };

  it("go on the seal's last message, with the footer they must stay above", async () => {
    const clock = new ManualClock();
    const { surface, calls } = surfaceOf(files);
    const r = rendererOf(surface, clock);
    await r.onTurnStart();
    await r.onTextChunk("Here: ![chart](./out.png)");
    await r.onDone("end_turn");
    await r.close();
    const last = calls.at(-1)?.message;
    expect(last?.files?.items).toEqual(["./out.png"]);
    expect(last?.body.startsWith("Here:")).toBe(true);
    expect(last?.body.endsWith(last?.files?.footer ?? "?")).toBe(true);
    expect(last?.files?.footer).toMatch(/^_.*Finished/);
    expect(calls.filter((c) => c.message.files)).toHaveLength(1);
  });

  it("an image-only answer still gets a message that carries it, and no '(no answer)'", async () => {
    const clock = new ManualClock();
    const { surface, calls } = surfaceOf(files);
    const r = rendererOf(surface, clock);
    await r.onTurnStart();
    await r.onTextChunk("![](only.png)");
    await r.onDone("end_turn");
    await r.close();
    expect(calls).toHaveLength(1);
    expect(calls[0]?.message.files?.items).toEqual(["only.png"]);
    expect(calls[0]?.message.body).toMatch(/^_.*Finished/);
  });
});

describe("a renderer closed before any turn began", () => {
  it("posts nothing when nothing failed (the user was told elsewhere), and the notice when it did", async () => {
    const clock = new ManualClock();
    const quiet = surfaceOf();
    await rendererOf(quiet.surface, clock).close();
    expect(quiet.calls).toEqual([]);
    const failed = surfaceOf();
    await rendererOf(failed.surface, clock).close("turn_failed");
    expect(failed.calls.map((c) => c.message.body).join("\n")).toContain("The agent did not answer");
  });
});
