import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import {
  buildDmSessionKey,
  CHAT_TYPE_FORUM,
  channelNamespaceOf,
  type DmKeyOptions,
  parseSessionKey,
  SessionKeyError,
  sessionKey,
  splitDmSessionKey,
} from "../../../src/messaging/session/keys.js";

interface ParityRecord {
  fn: string;
  args: unknown[];
  kwargs: Record<string, unknown>;
  out: unknown;
}
interface Raises {
  __raises__: string;
  message: string;
}

const all: ParityRecord[] = JSON.parse(
  readFileSync(new URL("../../../fixtures/parity/link.json", import.meta.url), "utf8"),
);
/**
 * Deliberate difference: reference functions not ported because no parley path runs them.
 * `telemetry_channel_of` labels metrics parley does not emit; `is_channel_session_key` gated the
 * reference's dashboard listing, which parley's web chat does not have. The bare-`thread_ts` shim
 * (`canonical_key`, `legacy_key`, `is_legacy_slack_key`) migrated the reference's pre-namespace
 * Slack rows; parley never stored one (issue 17), so every key is kept exactly as given.
 */
const LEGACY_SHIM = ["canonical_key", "legacy_key", "is_legacy_slack_key"];
const NOT_PORTED = new Set(["telemetry_channel_of", "is_channel_session_key", ...LEGACY_SHIM]);
const records = all.filter((r) => !NOT_PORTED.has(r.fn));

function str(value: unknown): string {
  if (typeof value !== "string")
    throw new TypeError(`expected a string argument, got ${JSON.stringify(value)}`);
  return value;
}

function dmOptions(kwargs: Record<string, unknown>): DmKeyOptions {
  const opts: DmKeyOptions = {
    // Deliberate difference: the reference has no notion of the sender, because its callers decided the
    // scope before calling. The port makes the unified bucket opt-in per sender (operator: true) so a
    // forgetful caller isolates instead of leaking the operator's history; the reference's behaviour is
    // the operator's, so the harness says so explicitly. The peer case is pinned in link.test.ts.
    operator: true,
  };
  if (kwargs.gen !== undefined) opts.gen = Number(kwargs.gen);
  if (kwargs.dm_scope !== undefined) opts.dmScope = str(kwargs.dm_scope);
  if (kwargs.chat_type !== undefined) opts.chatType = str(kwargs.chat_type);
  return opts;
}

// Results are normalised to the reference's JSON shape (snake_case, arrays for tuples) for comparison.
function call(record: ParityRecord): unknown {
  const [a, b, c] = record.args;
  switch (record.fn) {
    case "session_key":
      return sessionKey(str(a), str(b));
    case "channel_namespace_of":
      return channelNamespaceOf(str(a));
    case "split_dm_session_key":
      return splitDmSessionKey(str(a));
    case "parse_session_key": {
      const parsed = parseSessionKey(str(a));
      if (parsed === null) return null;
      const { surface, agent, chatType, scope, gen, bucket } = parsed;
      return { surface, agent, chat_type: chatType, scope, gen, bucket };
    }
    case "build_dm_session_key":
      return buildDmSessionKey(str(a), str(b), str(c), dmOptions(record.kwargs));
    default:
      throw new Error(`no port mapping for reference function ${record.fn}`);
  }
}

function isRaises(out: unknown): out is Raises {
  return typeof out === "object" && out !== null && "__raises__" in out;
}

describe("link.ts parity with the reference (fixtures/parity/link.json)", () => {
  it("has the expected number of records, so a truncated fixture cannot pass silently", () => {
    expect(all.length).toBe(337);
  });

  it("names the reference functions deliberately not ported, and how many records they hold", () => {
    const skipped = new Set(all.filter((r) => NOT_PORTED.has(r.fn)).map((r) => r.fn));
    expect([...skipped].sort()).toEqual([
      "canonical_key",
      "is_channel_session_key",
      "is_legacy_slack_key",
      "legacy_key",
      "telemetry_channel_of",
    ]);
    expect(all.length - records.length).toBe(214);
  });

  it("keeps a bare Slack thread_ts as given: it names no session namespace (no legacy shim)", () => {
    // The reference would read "1785370133.085469" as slack:1785370133.085469; parley has no such rows.
    expect(channelNamespaceOf("1785370133.085469")).toBe("");
    expect(parseSessionKey("1785370133.085469")).toBeNull();
    expect(splitDmSessionKey("slack:1785370133.085469")).toBeNull();
  });

  it.each(records.map((r, i) => [i, r] as const))("record %i", (_i, record) => {
    if (isRaises(record.out)) {
      expect(record.out.__raises__).toBe("ValueError");
      let thrown: unknown;
      try {
        call(record);
      } catch (error) {
        thrown = error;
      }
      expect(thrown).toBeInstanceOf(SessionKeyError);
      expect((thrown as SessionKeyError).message).toBe(record.out.message);
    } else {
      expect(call(record)).toEqual(record.out);
    }
  });

  it("covers every reference function the fixture names", () => {
    const fns = new Set(records.map((r) => r.fn));
    for (const fn of NOT_PORTED) expect(new Set(all.map((r) => r.fn)).has(fn)).toBe(true);
    expect([...fns].sort()).toEqual(
      [
        "build_dm_session_key",
        "channel_namespace_of",
        "parse_session_key",
        "session_key",
        "split_dm_session_key",
      ].sort(),
    );
  });
});

describe("deliberate differences from the reference", () => {
  it("refuses a negative or fractional generation, which would build a suffix the parser cannot read back", () => {
    // The reference appends ':gen-1' for gen=-1, producing a key whose generation parses as scope.
    expect(() => buildDmSessionKey("telegram", "main", "42", { gen: -1 })).toThrow(SessionKeyError);
    expect(() => buildDmSessionKey("telegram", "main", "42", { gen: 1.5 })).toThrow(SessionKeyError);
  });

  it("reads only ASCII digits in a generation suffix (Python's \\d also takes other scripts)", () => {
    expect(parseSessionKey("telegram:main:direct:42:gen٣")?.scope).toEqual(["42", "gen٣"]);
  });

  it("does not collapse a forum route even for the operator under unified scope (same as the reference)", () => {
    expect(
      buildDmSessionKey("telegram", "main", "-100:7", {
        dmScope: "unified",
        chatType: CHAT_TYPE_FORUM,
        operator: true,
      }),
    ).toBe("telegram:main:forum:-100:7");
  });
});
