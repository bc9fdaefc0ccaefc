/**
 * Forwarding between gateways over PostgreSQL LISTEN/NOTIFY (issue 26): who serves a conversation,
 * a request and its answer, and every way an answer can fail to come (no answerer, a gateway that
 * is gone, a forged answer, a payload too large, garbage on the channel, a dropped listening
 * connection). Against a real throwaway PostgreSQL; the answer timeout runs on a ManualClock.
 */
import pg from "pg";
import { describe, expect, it, vi } from "vitest";
import { FORWARDING_CHANNEL } from "../../src/gateway/forwarding.js";
import type { JsonValue } from "../../src/messaging/store/port.js";
import type { TestMember } from "../helpers/cluster-member.js";
import { joinTestMember } from "../helpers/cluster-member.js";
import { ManualClock } from "../helpers/manual-clock.js";
import { useTestPostgres } from "../helpers/use-postgres.js";

const db = useTestPostgres();

type Node = TestMember;

async function gateway(url: string, clock: ManualClock, name: string): Promise<Node> {
  return joinTestMember(url, clock, name, { forwardTimeoutMs: 5_000 });
}

async function close(...nodes: Node[]): Promise<void> {
  for (const n of nodes) await n.close();
}

/** A raw notification on the forwarding channel, as anything else connected to the database could send. */
async function notifyRaw(url: string, payload: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query("select pg_notify($1, $2)", [FORWARDING_CHANNEL, payload]);
  } finally {
    await client.end();
  }
}

describe("forwarding between gateways on PostgreSQL", () => {
  it("says which live gateway serves a conversation, and none once its lease ran out", async () => {
    const url = await db.server.createDatabase();
    const clock = new ManualClock();
    const a = await gateway(url, clock, "gw-a");
    const b = await gateway(url, clock, "gw-b");
    expect(await b.member.servedElsewhere("teams:c1")).toBeUndefined();
    expect(await a.member.acquire("teams:c1")).toBe(true);
    expect(await b.member.servedElsewhere("teams:c1")).toBe(a.member.gatewayId);
    // Its own conversation is not served elsewhere.
    expect(await a.member.servedElsewhere("teams:c1")).toBeUndefined();
    // A stops beating: once its lease is out, nobody live serves it (the press is judged where it lands).
    clock.t += a.member.leaseMs + 1;
    expect(await b.member.servedElsewhere("teams:c1")).toBeUndefined();
    await close(a, b);
  });

  it("a request reaches the asked gateway's answerer for that channel and its answer comes back", async () => {
    const url = await db.server.createDatabase();
    const clock = new ManualClock();
    const a = await gateway(url, clock, "gw-a");
    const b = await gateway(url, clock, "gw-b");
    const seen: JsonValue[] = [];
    a.member.onForwarded("teams", async (request) => {
      seen.push(request);
      return { ok: true, label: "Approved" };
    });
    // B's own answerer for the channel is never asked: the request was addressed to A.
    b.member.onForwarded("teams", async () => ({ ok: false, text: "wrong gateway" }));
    const answer = await b.member.forward(a.member.gatewayId, "teams", { kind: "approval", n: "é✓" });
    expect(answer).toEqual({ ok: true, label: "Approved" });
    expect(seen).toEqual([{ kind: "approval", n: "é✓" }]);
    await close(a, b);
  });

  it("a gateway with no answerer for the channel says so at once (no wait for the timeout)", async () => {
    const url = await db.server.createDatabase();
    const clock = new ManualClock();
    const a = await gateway(url, clock, "gw-a");
    const b = await gateway(url, clock, "gw-b");
    const stop = a.member.onForwarded("slack", async () => "slack answer");
    stop();
    expect(await b.member.forward(a.member.gatewayId, "slack", {})).toBeUndefined();
    expect(await b.member.forward(a.member.gatewayId, "teams", {})).toBeUndefined();
    await close(a, b);
  });

  it("a gateway that is gone gives no answer: the ask ends at its timeout", async () => {
    const url = await db.server.createDatabase();
    const clock = new ManualClock();
    const a = await gateway(url, clock, "gw-a");
    const b = await gateway(url, clock, "gw-b");
    const goneId = a.member.gatewayId;
    await close(a);
    let settled = false;
    const asked = b.member.forward(goneId, "teams", {}).then((answer) => {
      settled = true;
      return answer;
    });
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(settled).toBe(false);
    await clock.advance(5_000);
    expect(await asked).toBeUndefined();
    expect(b.logger.entries.some((e) => e.message.includes("did not answer a forwarded teams press"))).toBe(
      true,
    );
    await close(b);
  });

  it("an answer from any gateway but the one asked is ignored", async () => {
    const url = await db.server.createDatabase();
    const clock = new ManualClock();
    const a = await gateway(url, clock, "gw-a");
    const b = await gateway(url, clock, "gw-b");
    // Watch the channel to learn the ask's id, as a forger with database access could.
    const watcher = new pg.Client({ connectionString: url });
    await watcher.connect();
    const asks: { id: string }[] = [];
    watcher.on("notification", (n) => {
      const m = JSON.parse(n.payload ?? "{}") as { t: string; id: string };
      if (m.t === "ask") asks.push(m);
    });
    await watcher.query(`LISTEN ${FORWARDING_CHANNEL}`);
    let release: () => void = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    a.member.onForwarded("teams", async () => {
      await held;
      return "the real answer";
    });
    const asked = b.member.forward(a.member.gatewayId, "teams", {});
    await vi.waitFor(() => expect(asks).toHaveLength(1));
    const id = asks[0]?.id ?? "";
    await notifyRaw(
      url,
      JSON.stringify({ t: "answer", id, from: "someone/else/1", to: b.member.gatewayId, answer: "forged" }),
    );
    await new Promise((resolve) => setTimeout(resolve, 100));
    release();
    expect(await asked).toBe("the real answer");
    await watcher.end();
    await close(a, b);
  });

  it("garbage on the channel and a request too large for a notification break nothing", async () => {
    const url = await db.server.createDatabase();
    const clock = new ManualClock();
    const a = await gateway(url, clock, "gw-a");
    const b = await gateway(url, clock, "gw-b");
    a.member.onForwarded("teams", async (request) => ({ echo: request }));
    await notifyRaw(url, "not json");
    await notifyRaw(url, JSON.stringify({ t: "ask", to: a.member.gatewayId }));
    await vi.waitFor(() =>
      expect(a.logger.entries.filter((e) => e.message.includes("malformed forwarding"))).toHaveLength(2),
    );
    expect(await b.member.forward(a.member.gatewayId, "teams", { text: "x".repeat(9_000) })).toBeUndefined();
    expect(b.logger.entries.some((e) => e.message.includes("forwarding a teams press"))).toBe(true);
    expect(await b.member.forward(a.member.gatewayId, "teams", { text: "small" })).toEqual({
      echo: { text: "small" },
    });
    await close(a, b);
  });

  it("a dropped listening connection is opened again, and forwarding works after it", async () => {
    const url = await db.server.createDatabase();
    const clock = new ManualClock();
    const a = await gateway(url, clock, "gw-a");
    const b = await gateway(url, clock, "gw-b");
    a.member.onForwarded("teams", async () => "still here");
    // The server ends every LISTENing backend (a failover of the database, an operator's kill).
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    const killed = await admin.query(
      "select pg_terminate_backend(pid) from pg_stat_activity where query ilike 'LISTEN%' and pid <> pg_backend_pid()",
    );
    expect(killed.rowCount).toBe(2);
    await vi.waitFor(
      () =>
        expect(a.logger.entries.some((e) => e.message.includes("listening connection was lost"))).toBe(true),
      { timeout: 5_000 },
    );
    await vi.waitFor(
      async () => {
        const listening = await admin.query(
          "select count(*)::int as n from pg_stat_activity where query ilike 'LISTEN%'",
        );
        expect(listening.rows[0].n).toBe(2);
      },
      { timeout: 5_000 },
    );
    expect(await b.member.forward(a.member.gatewayId, "teams", {})).toBe("still here");
    await admin.end();
    await close(a, b);
  });
});
