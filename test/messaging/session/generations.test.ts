import { describe, expect, it } from "vitest";
import { ConversationState } from "../../../src/messaging/session/generations.js";
import { buildDmSessionKey } from "../../../src/messaging/session/keys.js";

const MIN = 60_000;
const HOUR = 60 * MIN;

class ManualClock {
  constructor(public t: number) {}
  now(): number {
    return this.t;
  }
  advance(ms: number): void {
    this.t += ms;
  }
}

const ROUTE = "telegram:main:direct:42";

describe("ConversationState", () => {
  it("starts at generation 0 and /new advances it", () => {
    const state = new ConversationState({ clock: new ManualClock(Date.UTC(2026, 0, 1)) });
    expect(state.generation(ROUTE)).toBe(0);
    expect(state.advance(ROUTE)).toBe(1);
    expect(state.advance(ROUTE)).toBe(2);
    expect(state.generation(ROUTE)).toBe(2);
  });

  it("keeps generations per route, so /new in one Topic does not reset another", () => {
    const state = new ConversationState({ clock: new ManualClock(Date.UTC(2026, 0, 1)) });
    state.advance("telegram:main:forum:-100:7");
    expect(state.generation("telegram:main:forum:-100:7")).toBe(1);
    expect(state.generation("telegram:main:forum:-100:8")).toBe(0);
  });

  describe("seeding from the persisted map", () => {
    it("resumes the newest persisted generation and /new moves PAST it, never back onto a discarded one", () => {
      const persisted = new Map([[ROUTE, 3]]);
      const seen: string[] = [];
      const state = new ConversationState({
        clock: new ManualClock(Date.UTC(2026, 0, 1)),
        seed: (route) => {
          seen.push(route);
          return persisted.get(route) ?? 0;
        },
      });
      expect(state.generation(ROUTE)).toBe(3);
      expect(state.advance(ROUTE)).toBe(4);
      expect(buildDmSessionKey("telegram", "main", "42", { gen: state.generation(ROUTE) })).toBe(
        "telegram:main:direct:42:gen4",
      );
      expect(seen).toEqual([ROUTE]); // consulted once per route
    });

    it("an unseeded restart would collide with :gen1; a seeded one does not", () => {
      const unseeded = new ConversationState({ clock: new ManualClock(1) });
      expect(unseeded.advance(ROUTE)).toBe(1); // the discarded conversation, resumed
      const seeded = new ConversationState({ clock: new ManualClock(1), seed: () => 1 });
      expect(seeded.advance(ROUTE)).toBe(2);
    });

    it("seeds last activity too, so the first message after a restart can still idle-rotate", () => {
      const clock = new ManualClock(Date.UTC(2026, 0, 1, 12));
      const state = new ConversationState({
        clock,
        idleMinutes: 60,
        seed: () => ({ generation: 2, lastActiveMs: clock.t - 2 * HOUR }),
      });
      expect(state.maybeRotate(ROUTE, { busy: false })).toEqual({ generation: 3, rotated: true });
    });

    it("seedGeneration raises but never lowers (an async store may answer late)", () => {
      const state = new ConversationState({ clock: new ManualClock(1) });
      state.advance(ROUTE);
      state.advance(ROUTE);
      expect(state.seedGeneration(ROUTE, 1)).toBe(2);
      expect(state.seedGeneration(ROUTE, 5)).toBe(5);
    });

    it("refuses a garbage persisted generation and propagates a failing seed, retrying next time", () => {
      let calls = 0;
      const state = new ConversationState({
        clock: new ManualClock(1),
        seed: () => {
          calls += 1;
          if (calls === 1) throw new Error("session map unreadable");
          return 2;
        },
      });
      expect(() => state.generation(ROUTE)).toThrow("session map unreadable");
      expect(state.generation(ROUTE)).toBe(2);
      expect(() => new ConversationState({ seed: () => -1 }).generation(ROUTE)).toThrow(RangeError);
      expect(() => new ConversationState({ seed: () => Number.NaN }).generation(ROUTE)).toThrow(RangeError);
    });
  });

  describe("idle reset", () => {
    it("rotates after N idle minutes, and activity in between keeps the conversation", () => {
      const clock = new ManualClock(Date.UTC(2026, 0, 1, 12));
      const state = new ConversationState({ clock, idleMinutes: 30 });
      expect(state.maybeRotate(ROUTE, { busy: false })).toEqual({ generation: 0, rotated: false });
      clock.advance(29 * MIN);
      expect(state.maybeRotate(ROUTE, { busy: false })).toEqual({ generation: 0, rotated: false });
      clock.advance(29 * MIN);
      expect(state.maybeRotate(ROUTE, { busy: false })).toEqual({ generation: 0, rotated: false });
      clock.advance(30 * MIN);
      expect(state.maybeRotate(ROUTE, { busy: false })).toEqual({ generation: 1, rotated: true });
      expect(state.maybeRotate(ROUTE, { busy: false })).toEqual({ generation: 1, rotated: false });
    });

    it("counts /new as activity, so the next message does not rotate again", () => {
      const clock = new ManualClock(Date.UTC(2026, 0, 1, 12));
      const state = new ConversationState({ clock, idleMinutes: 30 });
      state.maybeRotate(ROUTE, { busy: false });
      clock.advance(HOUR);
      state.advance(ROUTE);
      expect(state.maybeRotate(ROUTE, { busy: false })).toEqual({ generation: 1, rotated: false });
    });
  });

  describe("daily reset", () => {
    it("rotates at the configured LOCAL hour via the injected offset", () => {
      // UTC+2: 04:00 local is 02:00Z.
      const clock = new ManualClock(Date.UTC(2026, 0, 1, 20));
      const state = new ConversationState({ clock, dailyResetHour: 4, utcOffsetMinutes: 120 });
      state.maybeRotate(ROUTE, { busy: false });
      clock.t = Date.UTC(2026, 0, 2, 1, 59);
      expect(state.maybeRotate(ROUTE, { busy: false }).rotated).toBe(false);
      clock.t = Date.UTC(2026, 0, 2, 2, 0);
      expect(state.maybeRotate(ROUTE, { busy: false })).toEqual({ generation: 1, rotated: true });
    });
  });

  describe("the busy check comes first", () => {
    it("never rotates a busy conversation under its running turn, and rotates on the next idle message", () => {
      const clock = new ManualClock(Date.UTC(2026, 0, 1, 12));
      const state = new ConversationState({ clock, idleMinutes: 30 });
      state.maybeRotate(ROUTE, { busy: false });
      clock.advance(2 * HOUR);
      // A message arriving mid-turn (steered or queued) must address the running turn's key.
      expect(state.maybeRotate(ROUTE, { busy: true })).toEqual({ generation: 0, rotated: false });
      // That message was activity: the conversation is not idle right after it.
      expect(state.maybeRotate(ROUTE, { busy: false })).toEqual({ generation: 0, rotated: false });
      clock.advance(31 * MIN);
      expect(state.maybeRotate(ROUTE, { busy: false })).toEqual({ generation: 1, rotated: true });
    });
  });

  it("forget drops in-memory state and re-seeds on next use", () => {
    let stored = 0;
    const state = new ConversationState({ clock: new ManualClock(1), seed: () => stored });
    state.advance(ROUTE);
    stored = 7;
    expect(state.generation(ROUTE)).toBe(1);
    state.forget(ROUTE);
    expect(state.generation(ROUTE)).toBe(7);
  });
});
