/**
 * The push budget on an injected clock: 30 pushes a minute and 1,000 an hour per conversation, each
 * window kept a second longer than WeCom's (WeCom counts on its own receipt clock: 59,999 ms apart
 * was inside its minute), the wait it reports, and the estimate the renderer tells the user from.
 */
import { describe, expect, it } from "vitest";
import { PushBudget } from "../../src/wecom/budget.js";

function budget(start = 1_000_000) {
  let t = start;
  const b = new PushBudget(() => t);
  return {
    b,
    at: (ms: number) => {
      t = start + ms;
    },
  };
}

describe("the minute", () => {
  it("admits 30 pushes at once; the 31st waits until a second past the platform's minute", () => {
    const { b, at } = budget();
    for (let i = 0; i < 30; i++) expect(b.take("u")).toBe(0);
    expect(b.take("u")).toBe(61_000);
    // The platform's own edge (59,999 ms, refused there) and its minute exactly: both still wait.
    at(59_999);
    expect(b.take("u")).toBe(1_001);
    at(60_000);
    expect(b.take("u")).toBe(1_000);
    at(60_999);
    expect(b.take("u")).toBe(1);
    at(61_000);
    expect(b.take("u")).toBe(0);
    // All 30 were spent at one instant, so all left together; the new minute starts now.
    for (let i = 1; i < 30; i++) expect(b.take("u")).toBe(0);
    expect(b.take("u")).toBe(61_000);
  });

  it("counts each conversation on its own, and a refused take spends nothing", () => {
    const { b } = budget();
    for (let i = 0; i < 30; i++) b.take("u");
    expect(b.take("u")).toBeGreaterThan(0);
    expect(b.take("u")).toBeGreaterThan(0);
    expect(b.take("v")).toBe(0);
  });

  it("31 pushes spread over 60 s: the 31st waits for the first plus 61 s", () => {
    const { b, at } = budget();
    for (let i = 0; i < 30; i++) {
      at(i * 2_000);
      expect(b.take("u")).toBe(0);
    }
    at(59_999);
    expect(b.take("u")).toBe(61_000 - 59_999);
  });
});

describe("the hour", () => {
  it("admits 1,000 pushes an hour, however they are paced within the minute budget", () => {
    const { b, at } = budget();
    let now = 0;
    let sent = 0;
    // As fast as the minute allows: 30 every 61 s.
    while (sent < 1_000) {
      at(now);
      const wait = b.take("u");
      if (wait === 0) sent += 1;
      else now += wait;
    }
    const last = now;
    expect(last).toBeLessThan(3_600_000);
    // The 1,001st waits for the hour (plus the second) since the first push, not only for the minute.
    at(last + 61_000);
    expect(b.take("u")).toBe(3_601_000 - (last + 61_000));
    at(3_600_999);
    expect(b.take("u")).toBe(1);
    at(3_601_000);
    expect(b.take("u")).toBe(0);
  });
});

describe("the estimate", () => {
  it("is how long until n more pushes could have gone out, and spends nothing", () => {
    const { b } = budget();
    expect(b.delayFor("u", 30)).toBe(0);
    expect(b.delayFor("u", 31)).toBe(61_000);
    expect(b.delayFor("u", 61)).toBe(122_000);
    for (let i = 0; i < 25; i++) b.take("u");
    expect(b.delayFor("u", 5)).toBe(0);
    expect(b.delayFor("u", 6)).toBe(61_000);
    expect(b.take("u")).toBe(0);
  });
});
