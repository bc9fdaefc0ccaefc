/**
 * Several gateways on one PostgreSQL (issue 26): membership leases, conversation ownership, the
 * single-connection election and the shared intake pick-up, against a real throwaway server. Time
 * is a ManualClock; each gateway's heartbeat is driven by calling its tick() (a gateway that is
 * never ticked again is one that was SIGKILLed: its lease simply runs out).
 */
import { describe, expect, it } from "vitest";
import { DEFAULT_LEASE_MS } from "../../src/gateway/cluster.js";
import type { InboundMessage } from "../../src/messaging/store/port.js";
import type { TestMember } from "../helpers/cluster-member.js";
import { joinTestMember } from "../helpers/cluster-member.js";
import { ManualClock } from "../helpers/manual-clock.js";
import { useTestPostgres } from "../helpers/use-postgres.js";

const pg = useTestPostgres();

type Node = TestMember;

function gateway(url: string, clock: ManualClock, name = "host-1"): Promise<Node> {
  return joinTestMember(url, clock, name);
}

function msg(id: string, conversation = "chat-1"): InboundMessage {
  return {
    channel: "telegram",
    platformMessageId: id,
    conversationKey: `telegram:${conversation}`,
    payload: { text: id },
    receivedAtMs: 1,
  };
}

async function close(...nodes: Node[]): Promise<void> {
  for (const n of nodes) await n.store.close();
}

describe("cluster membership and ownership on PostgreSQL", () => {
  it("two gateways on one host have distinct identities, neither the host name alone", async () => {
    const url = await pg.server.createDatabase();
    const clock = new ManualClock();
    const a = await gateway(url, clock);
    const b = await gateway(url, clock);
    expect(a.member.gatewayId).not.toBe(b.member.gatewayId);
    expect(a.member.gatewayId).not.toBe("host-1");
    expect(a.member.gatewayId.startsWith("host-1/")).toBe(true);
    expect(await a.store.cluster.liveMembers(clock.now())).toHaveLength(2);
    expect(DEFAULT_LEASE_MS).toBeLessThanOrEqual(15_000);
    await close(a, b);
  });

  it("a conversation is never served by both, even when they race for it", async () => {
    const url = await pg.server.createDatabase();
    const clock = new ManualClock();
    const a = await gateway(url, clock);
    const b = await gateway(url, clock);
    const keys = Array.from({ length: 40 }, (_, i) => `telegram:race-${i}`);
    const results = await Promise.all(
      keys.flatMap((k) => [
        a.member.acquire(k).then((won) => ({ k, who: "a", won })),
        b.member.acquire(k).then((won) => ({ k, who: "b", won })),
      ]),
    );
    for (const k of keys) {
      const winners = results.filter((r) => r.k === k && r.won);
      expect(winners, k).toHaveLength(1);
      // Asked again, each gateway gets the same answer: ownership is stable while both live.
      const owner = winners[0]?.who === "a" ? a : b;
      const other = owner === a ? b : a;
      expect(await owner.member.acquire(k)).toBe(true);
      expect(await other.member.acquire(k)).toBe(false);
    }
    await close(a, b);
  });

  it("a gateway that stops beating loses its conversations to the survivor after its lease, and fences itself", async () => {
    const url = await pg.server.createDatabase();
    const clock = new ManualClock();
    const a = await gateway(url, clock);
    const b = await gateway(url, clock);
    expect(await a.member.acquire("telegram:chat-1")).toBe(true);
    // Both beat for a while: A keeps the conversation.
    for (let i = 0; i < 10; i += 1) {
      clock.t += 1000;
      await a.member.tick();
      await b.member.tick();
      expect(await b.member.acquire("telegram:chat-1")).toBe(false);
    }
    // A stops (SIGKILL): B keeps beating; until A's lease runs out, B still may not take it.
    clock.t += DEFAULT_LEASE_MS - 1000;
    await b.member.tick();
    expect(await b.member.acquire("telegram:chat-1")).toBe(false);
    clock.t += 1000;
    await b.member.tick();
    expect(await b.member.acquire("telegram:chat-1")).toBe(true);
    expect((await b.store.cluster.holder("conversation:telegram:chat-1", clock.now()))?.epoch).toBe(2);
    // A wakes up (it was only paused): its renewal finds the lease gone, so it stops serving.
    await a.member.tick();
    expect(a.fenced).toHaveLength(1);
    expect(await a.member.acquire("telegram:chat-1")).toBe(false);
    expect(await a.member.acquire("telegram:chat-2")).toBe(false);
    await close(a, b);
  });

  it("a graceful stop hands everything over at once, without waiting for the lease", async () => {
    const url = await pg.server.createDatabase();
    const clock = new ManualClock();
    const a = await gateway(url, clock);
    const b = await gateway(url, clock);
    expect(await a.member.acquire("telegram:chat-1")).toBe(true);
    await a.member.leave();
    expect(await b.member.acquire("telegram:chat-1")).toBe(true);
    expect((await b.store.cluster.holder("conversation:telegram:chat-1", clock.now()))?.epoch).toBe(2);
    await close(a, b);
  });

  it("the gateway taking a conversation over first reads the session rows its last owner wrote", async () => {
    const url = await pg.server.createDatabase();
    const clock = new ManualClock();
    const a = await gateway(url, clock);
    const b = await gateway(url, clock);
    expect(await a.member.acquire("telegram:chat-1")).toBe(true);
    a.store.sessions.setTitle("telegram:agent:direct:1", "named on A", "manual");
    await a.store.sessions.flush();
    // B loaded its rows before A wrote this one.
    expect(b.store.sessions.titleOf("telegram:agent:direct:1")).toBeNull();
    await a.member.leave();
    expect(await b.member.acquire("telegram:chat-1")).toBe(true);
    expect(b.store.sessions.titleOf("telegram:agent:direct:1")?.title).toBe("named on A");
    await close(a, b);
  });
});

describe("single connections (Telegram polling) on PostgreSQL", () => {
  it("exactly one gateway holds the connection; the survivor takes it within lease + one tick", async () => {
    const url = await pg.server.createDatabase();
    const clock = new ManualClock();
    const a = await gateway(url, clock);
    const b = await gateway(url, clock);
    const log: string[] = [];
    const handlers = (who: string) => ({
      elected: async () => void log.push(`${who} polls`),
      deposed: async () => void log.push(`${who} stops`),
    });
    await a.member.elect("telegram.getUpdates", handlers("a"));
    await b.member.elect("telegram.getUpdates", handlers("b"));
    expect(log).toEqual(["a polls"]);
    const killedAt = clock.t;
    // A is SIGKILLed: only B beats, once per tick (a third of the lease).
    let tookOverAfter = -1;
    for (let i = 0; i < 10 && tookOverAfter < 0; i += 1) {
      clock.t += DEFAULT_LEASE_MS / 3;
      await b.member.tick();
      if (b.member.holdsConnection("telegram.getUpdates")) tookOverAfter = clock.t - killedAt;
    }
    expect(log).toEqual(["a polls", "b polls"]);
    expect(tookOverAfter).toBeGreaterThanOrEqual(DEFAULT_LEASE_MS);
    expect(tookOverAfter).toBeLessThanOrEqual(DEFAULT_LEASE_MS + DEFAULT_LEASE_MS / 3);
    expect(tookOverAfter).toBeLessThan(30_000);
    // A comes back from a pause: fenced, it closes its connection; never two pollers at once.
    await a.member.tick();
    expect(log).toEqual(["a polls", "b polls", "a stops"]);
    await close(a, b);
  });
});

describe("the shared intake journal on PostgreSQL", () => {
  it("a message journaled by one gateway runs on the conversation's owner, taken in hand exactly once", async () => {
    const url = await pg.server.createDatabase();
    const clock = new ManualClock();
    const a = await gateway(url, clock);
    const b = await gateway(url, clock);
    expect(await a.member.acquire("telegram:chat-1")).toBe(true);
    // B received it (say, behind a load balancer): journaled, but B does not serve the conversation.
    const accepted = await b.store.intake.accept(msg("m1"));
    const id = accepted.kind === "accepted" ? accepted.id : -1;
    expect(await b.member.acquire("telegram:chat-1")).toBe(false);
    expect(await b.member.pickUp("telegram")).toEqual([]);
    const picked = await a.member.pickUp("telegram");
    expect(picked.map((r) => [r.id, r.resumed])).toEqual([[id, false]]);
    // Taken in hand: neither a second pick-up nor the receiver's late take-in-hand gets it again.
    expect(await a.member.pickUp("telegram")).toEqual([]);
    expect(await b.member.takeInHand(id)).toBe(false);
    await close(a, b);
  });

  it("concurrent pick-ups (SKIP LOCKED) never hand one row out twice", async () => {
    const url = await pg.server.createDatabase();
    const clock = new ManualClock();
    const a = await gateway(url, clock);
    for (let i = 0; i < 30; i += 1) await a.store.intake.accept(msg(`m${i}`, `chat-${i % 5}`));
    const rounds = await Promise.all(Array.from({ length: 6 }, () => a.member.pickUp("telegram")));
    const ids = rounds.flat().map((r) => r.id);
    expect(ids).toHaveLength(30);
    expect(new Set(ids).size).toBe(30);
    await close(a);
  });

  it("after the owner dies, the survivor takes over its conversations and resumes its unfinished work", async () => {
    const url = await pg.server.createDatabase();
    const clock = new ManualClock();
    const a = await gateway(url, clock);
    const b = await gateway(url, clock);
    const one = await a.store.intake.accept(msg("m1"));
    const two = await a.store.intake.accept(msg("m2", "chat-2"));
    const ids = [one, two].map((r) => (r.kind === "accepted" ? r.id : -1));
    // A runs m1 (taken in hand, claimed: a turn started) and holds m2 queued; then it is SIGKILLed.
    expect(await a.member.acquire("telegram:chat-1")).toBe(true);
    expect(await a.member.acquire("telegram:chat-2")).toBe(true);
    expect(await a.member.takeInHand(ids[0] as number)).toBe(true);
    expect(await a.member.takeInHand(ids[1] as number)).toBe(true);
    await a.store.intake.claim(ids[0] as number);
    expect(await b.member.pickUp("telegram")).toEqual([]);
    // A is gone; B beats on until A's lease has run out.
    for (let i = 0; i < 4; i += 1) {
      clock.t += DEFAULT_LEASE_MS / 3;
      await b.member.tick();
    }
    expect(b.fenced).toEqual([]);
    const picked = await b.member.pickUp("telegram");
    expect(picked.map((r) => [r.id, r.resumed, r.attempts])).toEqual([
      [ids[0], true, 1],
      [ids[1], true, 0],
    ]);
    expect(await b.member.acquire("telegram:chat-1")).toBe(true);
    await close(a, b);
  });
});
