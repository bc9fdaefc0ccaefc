import { describe, expect, it } from "vitest";
import { InvalidRequestBreaker, ReconnectGuard } from "../../src/discord/guards.js";

function clock() {
  const c = { t: 0, now: () => c.t };
  return c;
}

describe("InvalidRequestBreaker", () => {
  it("counts 401/403/non-shared 429 inside the window only", () => {
    const c = clock();
    const b = new InvalidRequestBreaker({ clock: c, threshold: 3, windowMs: 1000, coolOffMs: 500 });
    b.record(429, "shared");
    b.record(500);
    b.record(404);
    b.record(401);
    c.t = 1001; // the first one has left the window
    b.record(403);
    b.record(429, "user");
    expect(b.isOpen()).toBe(false);
    b.record(403);
    expect(b.isOpen()).toBe(true);
    expect(b.remainingMs()).toBe(500);
    c.t += 500;
    expect(b.isOpen()).toBe(false);
  });
});

describe("ReconnectGuard", () => {
  it("keeps an accept-then-close loop on the exponential curve; a healthy connection resets it", () => {
    const c = clock();
    const g = new ReconnectGuard({ clock: c, minHealthyMs: 30_000, baseMs: 1000, maxMs: 8000 });
    const delays: number[] = [];
    for (let i = 0; i < 5; i++) {
      g.opened();
      c.t += 100; // closed almost at once, cleanly
      g.closed();
      delays.push(g.delayMs());
    }
    expect(delays).toEqual([1000, 2000, 4000, 8000, 8000]);
    g.opened();
    c.t += 30_000;
    g.closed();
    expect(g.delayMs()).toBe(0);
  });

  it("a close before READY counts as a failure", () => {
    const g = new ReconnectGuard({ clock: clock() });
    g.closed();
    expect(g.delayMs()).toBe(1000);
  });
});
