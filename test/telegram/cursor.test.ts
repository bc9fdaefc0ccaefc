/** The durable getUpdates cursor: a low-water mark, advance-only, atomic, and never a crash. */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { MemoryLogger } from "../../src/messaging/base/logger.js";
import { CURSOR_DIR, CURSOR_FILE, parseCursor, UpdateCursor } from "../../src/telegram/cursor.js";
import { until } from "./helpers.js";

const home = () => mkdtempSync(join(tmpdir(), "parley-tg-cursor-"));
const onDisk = (h: string) =>
  JSON.parse(readFileSync(join(h, CURSOR_DIR, CURSOR_FILE), "utf8")) as { offset: number };

describe("UpdateCursor", () => {
  it("persists the oldest in-flight id, not what the poll observed", async () => {
    const h = home();
    const c = await UpdateCursor.load({ home: h });
    c.register([100, 101, 102]);
    await c.persist();
    expect(c.offset).toBe(103);
    expect(onDisk(h).offset).toBe(100);
    await c.resolve(101); // finishing out of order does not move the mark past 100
    expect(onDisk(h).offset).toBe(100);
    await c.resolve(100);
    expect(onDisk(h).offset).toBe(102);
    await c.resolve(102);
    expect(onDisk(h).offset).toBe(103);
    const restarted = await UpdateCursor.load({ home: h });
    expect(restarted.offset).toBe(103);
  });

  it("never regresses the file, even when writes finish out of order", async () => {
    const h = home();
    const written: number[] = [];
    let release: (() => void) | undefined;
    const slowFirst = new Promise<void>((resolve) => {
      release = resolve;
    });
    let calls = 0;
    const c = await UpdateCursor.load({
      home: h,
      write: async (_path, _dir, data) => {
        calls += 1;
        if (calls === 1) await slowFirst;
        written.push((JSON.parse(data) as { offset: number }).offset);
      },
    });
    c.register([5, 6]);
    const a = c.resolve(5); // writes 6, and that write is slow
    await until(() => calls === 1, "the first write");
    const b = c.resolve(6); // wants 7: must not land before (and be overwritten by) the 6
    release?.();
    await Promise.all([a, b]);
    expect(written).toEqual([6, 7]);
    expect(c.persistedOffset).toBe(7);
  });

  it("writes only when the mark moved", async () => {
    const h = home();
    let writes = 0;
    const c = await UpdateCursor.load({
      home: h,
      write: async () => {
        writes += 1;
      },
    });
    await c.persist();
    c.register([1]);
    await c.persist(); // low-water 1 > 0: one write
    await c.persist(); // unchanged: none
    expect(writes).toBe(1);
  });

  it.each([
    ["absent", null],
    ["garbage", "{not json"],
    ["wrong shape", JSON.stringify({ cursor: 5 })],
    ["negative", JSON.stringify({ offset: -3 })],
    ["fractional", JSON.stringify({ offset: 1.5 })],
    ["a string", JSON.stringify({ offset: "99" })],
  ])("an unusable file (%s) reads as 0 and the channel keeps going", async (_name, content) => {
    const h = home();
    if (content !== null) {
      mkdirSync(join(h, CURSOR_DIR), { recursive: true });
      writeFileSync(join(h, CURSOR_DIR, CURSOR_FILE), content);
    }
    const logger = new MemoryLogger();
    const c = await UpdateCursor.load({ home: h, logger });
    expect(c.offset).toBe(0);
    if (content !== null) expect(logger.entries.some((e) => e.level === "warn")).toBe(true);
    c.register([7]);
    await c.resolve(7);
    expect(onDisk(h).offset).toBe(8);
  });

  it("an unreadable path (a directory) reads as 0", async () => {
    const h = home();
    mkdirSync(join(h, CURSOR_DIR, CURSOR_FILE), { recursive: true });
    const c = await UpdateCursor.load({ home: h, logger: new MemoryLogger() });
    expect(c.offset).toBe(0);
  });

  it("a failed write is logged and costs a replay window, not the channel", async () => {
    const h = home();
    const logger = new MemoryLogger();
    const c = await UpdateCursor.load({
      home: h,
      logger,
      write: async () => {
        throw new Error("disk full");
      },
    });
    c.register([3]);
    await c.resolve(3);
    expect(c.persistedOffset).toBe(0);
    expect(logger.entries.some((e) => e.level === "error")).toBe(true);
  });

  it("deletes a cursor left in the data-home root instead of trusting it", async () => {
    const h = home();
    writeFileSync(join(h, "telegram_offset.json"), JSON.stringify({ offset: 999999 }));
    const c = await UpdateCursor.load({ home: h });
    expect(c.offset).toBe(0);
    expect(existsSync(join(h, "telegram_offset.json"))).toBe(false);
  });

  it("parseCursor accepts only a non-negative safe integer offset", () => {
    expect(parseCursor('{"offset": 42}')).toBe(42);
    expect(parseCursor('{"offset": 0}')).toBe(0);
    expect(parseCursor("[]")).toBeNull();
    expect(parseCursor("null")).toBeNull();
    expect(parseCursor(`{"offset": ${2 ** 60}}`)).toBeNull();
  });
});
