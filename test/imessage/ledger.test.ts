/**
 * The own-message ledger alone: a record per send, consumed whole by guid or body; the TTL counts
 * from when the send resolved; an unresolved record is never pruned; a failed send leaves none.
 */
import { describe, expect, it } from "vitest";
import { OwnMessageLedger } from "../../src/imessage/ledger.js";

const clockAt = () => {
  let t = 1_000;
  return { now: () => t, advance: (ms: number) => (t += ms) };
};

describe("own-message ledger", () => {
  it("one echo consumes one record, by guid or by body", () => {
    const clock = clockAt();
    const ledger = new OwnMessageLedger(clock, 10_000);
    ledger.sending("hello").landed("G1");
    ledger.sending("hello").landed();
    expect(ledger.consume({ guid: "G1", text: "something else" })).toBe(true);
    expect(ledger.consume({ guid: "G9", text: " hello\r\n" })).toBe(true);
    expect(ledger.consume({ guid: "G9", text: "hello" })).toBe(false);
  });

  it("the TTL starts when the send resolves; an unresolved record is never pruned", () => {
    const clock = clockAt();
    const ledger = new OwnMessageLedger(clock, 10_000);
    const slow = ledger.sending("slow one");
    clock.advance(60_000);
    // Still in flight a minute later: its echo is still ours.
    expect(ledger.consume({ guid: "x", text: "slow one" })).toBe(true);
    const late = ledger.sending("late");
    clock.advance(60_000);
    late.landed("G2");
    clock.advance(9_000);
    expect(ledger.consume({ guid: "G2", text: "late" })).toBe(true);
    ledger.sending("stale").landed();
    clock.advance(10_001);
    expect(ledger.consume({ guid: "x", text: "stale" })).toBe(false);
    slow.landed();
  });

  it("a failed send leaves no record", () => {
    const ledger = new OwnMessageLedger(clockAt());
    ledger.sending("lost").failed();
    expect(ledger.size).toBe(0);
    expect(ledger.consume({ guid: "x", text: "lost" })).toBe(false);
  });
});
