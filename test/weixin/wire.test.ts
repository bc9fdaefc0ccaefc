/**
 * Weixin at the wire: iLink's 64-bit message ids survive parsing digit for digit (two neighbouring
 * ids are two messages, both answered), the fake writes them as bare numbers past 2^53 as iLink
 * does, and every message that does not become a turn is counted with its reason.
 */
import { describe, expect, it } from "vitest";
import { parseJsonLossless, quoteUnsafeIntegers } from "../../src/weixin/json.js";
import { messageIdOf } from "../../src/weixin/wire.js";
import { wireJson } from "../fakes/weixin/server.js";
import { done, fakeIlinkLab, OWNER, text } from "./channel-harness.js";

describe("the lossless reader", () => {
  it("keeps an integer past 2^53 as its exact digits, every other value as JSON.parse reads it", () => {
    const raw = '{"message_id":7318201011843592193,"seq":-9223372036854775808,"t":1710000000000,"f":1.5e3}';
    expect(JSON.parse(raw).message_id).not.toBe(7318201011843592193n.toString());
    expect(parseJsonLossless(raw)).toEqual({
      message_id: "7318201011843592193",
      seq: "-9223372036854775808",
      t: 1710000000000,
      f: 1500,
    });
  });

  it("leaves digits inside strings alone, escapes included", () => {
    const raw = '{"a":"12345678901234567890","b":"x\\"99999999999999999999","c":[9007199254740993]}';
    expect(parseJsonLossless(raw)).toEqual({
      a: "12345678901234567890",
      b: 'x"99999999999999999999',
      c: ["9007199254740993"],
    });
    // Nothing to quote: the very same text.
    expect(quoteUnsafeIntegers('{"n":9007199254740991}')).toBe('{"n":9007199254740991}');
  });

  it("still refuses what is not JSON", () => {
    expect(() => parseJsonLossless("{not json 12345678901234567890")).toThrow(SyntaxError);
  });

  it("reads an id as the dedupe key only when it is exact", () => {
    expect(messageIdOf({ message_id: "7318201011843592193" })).toBe("7318201011843592193");
    expect(messageIdOf({ message_id: 77 })).toBe("77");
    // Already rounded by someone else's parse: no key rather than a wrong one.
    expect(messageIdOf({ message_id: 2 ** 60 })).toBe("");
  });
});

describe("the fake writes ids as iLink does", () => {
  it("a bigint id is a bare JSON number, every digit kept", () => {
    const text = wireJson({ msgs: [{ message_id: 7318201011843592193n, note: "7318201011843592193" }] });
    expect(text).toBe('{"msgs":[{"message_id":7318201011843592193,"note":"7318201011843592193"}]}');
  });
});

const lab = fakeIlinkLab();

describe("weixin ids and drops end to end", () => {
  it("two messages with neighbouring 64-bit ids are two messages: both answered", async () => {
    const c = await lab.channel({
      turns: () => [
        [text("first answer"), done],
        [text("second answer"), done],
      ],
    });
    lab.fake.push(OWNER, "first", { messageId: 7318201011843592193n });
    await lab.fake.waitFor(() => lab.fake.sent.length >= 1, 5000, "the first answer");
    lab.fake.push(OWNER, "second", { messageId: 7318201011843592194n });
    await lab.fake.waitFor(() => lab.fake.sent.length >= 2, 5000, "the second answer");
    expect(lab.fake.visible().join("\n")).toContain("second answer");
    expect([...c.providers.values()][0]?.prompts).toEqual(["first", "second"]);
    expect(c.drops.count("weixin", "redelivered")).toBe(0);
    // And each id is its own exact dedupe key: a redelivery of the second is caught, not answered.
    lab.fake.push(OWNER, "second", { messageId: 7318201011843592194n });
    await lab.fake.waitFor(
      () => c.drops.count("weixin", "redelivered") === 1,
      5000,
      "the redelivery counted",
    );
    expect(lab.fake.sent).toHaveLength(2);
  });

  it("counts an unknown message type, an unknown item kind and a redelivery, each with its reason", async () => {
    const c = await lab.channel({ turns: () => [[text("answered once"), done]] });
    lab.fake.push(OWNER, "from the future", { messageType: 7 });
    lab.fake.push(OWNER, "", { items: [{ type: 42 }] });
    lab.fake.push(OWNER, "", { items: [{ type: 42 }] });
    const { messageId } = lab.fake.push(OWNER, "question");
    await lab.fake.waitFor(() => lab.fake.sent.length >= 1, 5000, "the answer");
    lab.fake.push(OWNER, "question", { messageId: BigInt(messageId ?? "0") });
    await lab.fake.waitFor(() => c.drops.count("weixin", "redelivered") === 1, 5000, "the duplicate counted");
    // Counted once, by the journal: the channel does not count it again.
    expect(c.drops.count("weixin", "duplicate")).toBe(0);
    expect(c.drops.count("weixin", "unknown_shape")).toBe(3);
    expect(c.drops.count("weixin", "empty")).toBe(0);
    expect(lab.fake.sent).toHaveLength(1);
    // Warned once per shape: two shapes, two warnings, though three messages.
    const warned = c.logger.entries.filter((e) => e.message.includes("shape parley does not know"));
    expect(warned.map((e) => e.fields?.shape).sort()).toEqual(["item.type=42", "message_type=7"]);
    const redelivered = c.audit.records.filter((r) => r.fields.reason === "redelivered");
    expect(redelivered.map((r) => [r.operation, r.fields.user])).toEqual([["intake", OWNER]]);
  });
});

describe("a getupdates answer whose msgs is not a list", () => {
  it("is counted with its reason, and the poll goes on: the next message is answered", async () => {
    // Both malformed answers are queued before the first poll: a poll already held open would take
    // the message first, and the count would race the answer.
    lab.fake.injectMalformedUpdates({ 0: { message_id: 1 } });
    lab.fake.injectMalformedUpdates("not a list");
    const c = await lab.channel({ turns: () => [[text("still here"), done]] });
    await lab.fake.waitFor(
      () => lab.fake.callsTo("getupdates").length >= 3,
      5000,
      "both malformed answers taken",
    );
    lab.fake.push(OWNER, "are you there?");
    await lab.fake.waitFor(() => lab.fake.sent.length >= 1, 5000, "the answer after the malformed batches");
    expect(lab.fake.visible().join("\n")).toContain("still here");
    expect(c.drops.count("weixin", "unknown_shape")).toBe(2);
    const shapes = c.audit.records
      .filter((r) => r.operation === "inbound" && r.fields.reason === "unknown_shape")
      .map((r) => r.fields.shape);
    expect(shapes).toEqual(["getupdates.msgs:object", "getupdates.msgs:string"]);
    // The malformed answers moved no cursor: the message came in a later batch, once.
    expect([...c.providers.values()][0]?.prompts).toEqual(["are you there?"]);
    expect(c.drops.count("weixin", "duplicate")).toBe(0);
    expect(c.running.poller.currentHealth).toEqual({ healthy: true });
  });
});
