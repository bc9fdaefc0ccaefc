/**
 * TurnParts over the real delivery ledger: a turn's second run (after a crash) edits what the first
 * run landed, leaves an identical part alone, posts only what never landed, and says so in the audit
 * when a part's first creation is unaccounted for.
 */
import { describe, expect, it } from "vitest";
import { MemoryLogger } from "../../../src/messaging/base/logger.js";
import type { PartDelivery } from "../../../src/messaging/channel/delivery.js";
import { TurnParts } from "../../../src/messaging/channel/delivery.js";
import { MemoryAuditSink } from "../../../src/messaging/security/audit.js";
import { contentDigest } from "../../../src/messaging/store/digest.js";
import type { DeliveryLedger } from "../../../src/messaging/store/port.js";
import { open, useTempHome } from "../../store/helpers.js";

const home = useTempHome();

/** A platform in memory: messages by id, every call recorded. */
class Platform {
  readonly messages = new Map<string, string>();
  readonly calls: string[] = [];
  private next = 1;
  /** The next `create` lands on the platform, and then the process dies before it hears back. */
  dieAfterCreate = false;

  delivery(text: string): PartDelivery {
    return {
      create: async (key) => {
        const id = `m${this.next++}`;
        this.messages.set(id, text);
        this.calls.push(`create ${id} ${key ?? "-"}`);
        if (this.dieAfterCreate) throw new Error("killed");
        return id;
      },
      replace: async (id) => {
        this.calls.push(`edit ${id}`);
        if (!this.messages.has(id)) return false;
        this.messages.set(id, text);
        return true;
      },
    };
  }
}

const opts = () => ({ channel: "test", logger: new MemoryLogger(), audit: new MemoryAuditSink() });

async function run(ledger: DeliveryLedger, platform: Platform, texts: string[], o = opts()) {
  const parts = await TurnParts.open(ledger, "intake:7", o);
  const ids: (string | null)[] = [];
  for (const t of texts) ids.push(await parts.post(t, platform.delivery(t)));
  return { parts, ids };
}

describe("TurnParts", () => {
  it("a resumed turn edits the parts its first run landed and posts only the missing ones", async () => {
    const store = await open(home.dir);
    const platform = new Platform();
    const first = await run(store.deliveries, platform, ["Hello", "world"]);
    expect(first.ids).toEqual(["m1", "m2"]);
    expect(first.parts.resumed).toBe(false);

    const second = await run(store.deliveries, platform, ["Hello!", "world", "and more"]);
    expect(second.parts.resumed).toBe(true);
    expect(second.ids).toEqual(["m1", "m2", "m3"]);
    // Part 0 changed: edited. Part 1 is identical: not touched. Part 2 never landed: created.
    expect(platform.calls).toEqual([
      "create m1 intake:7#0",
      "create m2 intake:7#1",
      "edit m1",
      "create m3 intake:7#2",
    ]);
    expect([...platform.messages.values()]).toEqual(["Hello!", "world", "and more"]);
    const ledger = await store.deliveries.parts("intake:7");
    expect(ledger.map((p) => [p.partIndex, p.state, p.platformMessageId])).toEqual([
      [0, "landed", "m1"],
      [1, "landed", "m2"],
      [2, "landed", "m3"],
    ]);
    expect(ledger[0]?.textDigest).toBe(contentDigest("Hello!"));
    await store.close();
  });

  it("a part whose message was deleted meanwhile is posted anew", async () => {
    const store = await open(home.dir);
    const platform = new Platform();
    await run(store.deliveries, platform, ["one"]);
    platform.messages.delete("m1");
    const again = await run(store.deliveries, platform, ["one, again"]);
    expect(again.ids).toEqual(["m2"]);
    expect(platform.calls).toEqual(["create m1 intake:7#0", "edit m1", "create m2 intake:7#0"]);
    await store.close();
  });

  it("a creation cut short after the platform took it is posted again, and the ambiguity is audited", async () => {
    const store = await open(home.dir);
    const platform = new Platform();
    platform.dieAfterCreate = true;
    await expect(run(store.deliveries, platform, ["answer"])).rejects.toThrow("killed");
    expect((await store.deliveries.parts("intake:7"))[0]?.state).toBe("sending");

    platform.dieAfterCreate = false;
    const o = opts();
    const again = await run(store.deliveries, platform, ["answer"], o);
    expect(again.ids).toEqual(["m2"]);
    // The same stable key both times: a platform that dedupes creations by key keeps one message.
    expect(platform.calls).toEqual(["create m1 intake:7#0", "create m2 intake:7#0"]);
    expect(o.audit.find("delivery", "sent")[0]?.fields).toMatchObject({
      reason: "ambiguous_resend",
      turn: "intake:7",
      part: 0,
    });
    await store.close();
  });

  it("a delivery that marks sending itself is recorded sending only from that moment", async () => {
    const store = await open(home.dir);
    const parts = await TurnParts.open(store.deliveries, "intake:8", opts());
    const states: (string | undefined)[] = [];
    const look = async () => states.push((await store.deliveries.parts("intake:8"))[0]?.state);
    const id = await parts.post("paced", {
      marksSending: true,
      create: async (_key, sending) => {
        await look(); // queued (a chat's pacing): nothing recorded, nothing sent
        await sending();
        await look(); // leaving now: its fate is unknown until it returns
        return "m1";
      },
      replace: async () => false,
    });
    await look();
    expect(id).toBe("m1");
    expect(states).toEqual([undefined, "sending", "landed"]);
    await store.close();
  });

  it("unrecorded parts post every time and carry no key (nothing will create them twice)", async () => {
    const platform = new Platform();
    const parts = TurnParts.unrecorded();
    expect(parts.turnId).toMatch(/^turn:/);
    expect(await parts.post("a", platform.delivery("a"))).toBe("m1");
    expect(platform.calls).toEqual(["create m1 -"]);
    // A surface that names its own messages still gets stable, distinct keys.
    expect(parts.nextKey()).toBe(`${parts.turnId}#1`);
  });

  it("a ledger that cannot be written costs the idempotency, never the delivery", async () => {
    const platform = new Platform();
    const o = opts();
    const broken: DeliveryLedger = {
      markSending: async () => Promise.reject(new Error("disk full")),
      markLanded: async () => Promise.reject(new Error("disk full")),
      parts: async () => Promise.reject(new Error("disk full")),
      prune: async () => 0,
    };
    const { ids } = await run(broken, platform, ["still delivered"], o);
    expect(ids).toEqual(["m1"]);
    expect(o.logger.entries.filter((e) => e.level === "error").map((e) => e.message)).toEqual([
      "test: reading the delivery ledger failed",
      "test: recording a delivery failed",
      "test: recording a delivery failed",
    ]);
  });

  it("names what an earlier run landed beyond this run's parts: the leftovers to retire", async () => {
    const store = await open(home.dir);
    const platform = new Platform();
    await run(store.deliveries, platform, ["a long first try", "its second part", "a prompt"]);
    const second = await run(store.deliveries, platform, ["the shorter answer"]);
    expect(second.ids).toEqual(["m1"]);
    expect(second.parts.leftovers()).toEqual(["m2", "m3"]);
    // A fresh turn has none; nor has a run that took every earlier part.
    const third = await run(store.deliveries, platform, ["x", "y", "z"]);
    expect(third.parts.leftovers()).toEqual([]);
    expect(TurnParts.unrecorded().leftovers()).toEqual([]);
    await store.close();
  });
});
