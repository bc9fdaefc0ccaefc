import { describe, expect, it } from "vitest";
import { formatDuration, parseAt, parseDuration, parseEvery } from "../../../src/messaging/schedule/spec.js";

// 2025-03-10 12:00 UTC, a Monday.
const NOW = Date.UTC(2025, 2, 10, 12, 0);
const utc = { now: NOW, utcOffsetMinutes: () => 0 };
const plusTwo = { now: NOW, utcOffsetMinutes: () => 120 };

describe("durations", () => {
  it("reads unit runs and writes them back in at most two units", () => {
    expect(parseDuration("90m")).toBe(90 * 60_000);
    expect(parseDuration("1h30m")).toBe(90 * 60_000);
    expect(parseDuration("2D")).toBe(2 * 86_400_000);
    for (const bad of ["", "10", "h", "1x", "1h 30m", "-5m"]) expect(parseDuration(bad)).toBeNull();
    expect(formatDuration(90 * 60_000)).toBe("1h30m");
    expect(formatDuration(86_400_000 + 3_600_000 + 60_000)).toBe("1d1h");
  });
});

describe("/every", () => {
  it("takes an interval and the rest as the prompt, first due one interval from now", () => {
    expect(parseEvery("1h  check the build  please", utc)).toEqual({
      ok: true,
      schedule: { kind: "every", everyMs: 3_600_000 },
      firstRunMs: NOW + 3_600_000,
      prompt: "check the build  please",
    });
  });

  it("refuses a missing prompt, a non-interval, and intervals too short or too long", () => {
    expect(parseEvery("1h", utc)).toMatchObject({ ok: false });
    expect(parseEvery("soon do it", utc)).toMatchObject({ ok: false });
    expect(parseEvery("30s do it", utc)).toEqual({ ok: false, error: "The shortest interval is 1 minute." });
    expect(parseEvery("400d do it", utc)).toMatchObject({ ok: false });
  });
});

describe("/at", () => {
  it("reads HH:MM as the next such local time, today or tomorrow", () => {
    expect(parseAt("14:30 lunch report", utc)).toMatchObject({
      ok: true,
      firstRunMs: Date.UTC(2025, 2, 10, 14, 30),
      prompt: "lunch report",
    });
    expect(parseAt("09:00 standup", utc)).toMatchObject({ firstRunMs: Date.UTC(2025, 2, 11, 9, 0) });
    // At UTC+2 it is 14:00 locally: 14:30 local is 12:30 UTC today.
    expect(parseAt("14:30 x", plusTwo)).toMatchObject({ firstRunMs: Date.UTC(2025, 2, 10, 12, 30) });
  });

  it("reads a local date and time, in either spelling, and a relative +duration", () => {
    const expected = Date.UTC(2025, 5, 1, 7, 0);
    expect(parseAt("2025-06-01 09:00 go", plusTwo)).toMatchObject({
      ok: true,
      firstRunMs: expected,
      prompt: "go",
    });
    expect(parseAt("2025-06-01T09:00 go", plusTwo)).toMatchObject({ firstRunMs: expected });
    expect(parseAt("+45m stretch", utc)).toMatchObject({ firstRunMs: NOW + 45 * 60_000, prompt: "stretch" });
    expect(parseAt("in 2h stretch", utc)).toMatchObject({
      firstRunMs: NOW + 2 * 3_600_000,
      prompt: "stretch",
    });
  });

  it("refuses the past, impossible dates, nonsense and a missing prompt", () => {
    expect(parseAt("2024-01-01 09:00 late", utc)).toEqual({
      ok: false,
      error: "That time has already passed.",
    });
    expect(parseAt("2025-02-31 09:00 x", utc)).toMatchObject({ ok: false });
    expect(parseAt("25:00 x", utc)).toMatchObject({ ok: false });
    expect(parseAt("tomorrow x", utc)).toMatchObject({ ok: false });
    expect(parseAt("14:30", utc)).toMatchObject({ ok: false });
    expect(parseAt("+500d x", utc)).toMatchObject({ ok: false });
  });
});
