/**
 * One auto-approve grant across gateways on one PostgreSQL (issue 26): an arm on one gateway covers
 * the turns the others run once they tick, a disarm on any ends it everywhere, a gateway joining
 * later takes the grant in force, and the lapse is audited and announced once, where it was armed.
 * Time is a ManualClock; each gateway's heartbeat is a tick() call.
 */
import { describe, expect, it } from "vitest";
import { GRANT_ROW, shareGrant } from "../../src/gateway/shared-grant.js";
import { AutoApproveGrant, GRANT_LAPSED } from "../../src/messaging/approval/grant.js";
import { MemoryAuditSink } from "../../src/messaging/security/audit.js";
import type { TestMember } from "../helpers/cluster-member.js";
import { joinTestMember } from "../helpers/cluster-member.js";
import { ManualClock } from "../helpers/manual-clock.js";
import { useTestPostgres } from "../helpers/use-postgres.js";

const db = useTestPostgres();
const MIN = 60_000;

interface Node extends TestMember {
  grant: AutoApproveGrant;
  audit: MemoryAuditSink;
}

async function gateway(url: string, clock: ManualClock, name: string): Promise<Node> {
  const joined = await joinTestMember(url, clock, name);
  const audit = new MemoryAuditSink();
  const grant = new AutoApproveGrant({ audit, clock, logger: joined.logger });
  await shareGrant({
    grant,
    routes: joined.store.routes,
    logger: joined.logger,
    onTick: (read) => joined.member.onTick(read),
    serving: () => joined.member.serving,
  });
  return { ...joined, grant, audit };
}

const owner = (source: string, caller: string, told: string[] = []) => ({
  source,
  caller,
  owner: true,
  direct: true,
  command: "/yolo",
  notify: (text: string) => void told.push(text),
});

/** Writes are queued behind the arm; a tick reads after them. */
async function settle(): Promise<void> {
  await new Promise((resolve) => setTimeout(resolve, 50));
}

async function close(...nodes: Node[]): Promise<void> {
  for (const n of nodes) await n.close();
}

describe("one auto-approve grant across gateways", () => {
  it("armed on one gateway, it covers the others after a tick; a disarm anywhere ends it everywhere", async () => {
    const url = await db.server.createDatabase();
    const clock = new ManualClock();
    const a = await gateway(url, clock, "gw-a");
    const b = await gateway(url, clock, "gw-b");
    expect(a.grant.command("on 30m", owner("slack", "U1"))).toMatch(/Auto-approve is ON for 30m/);
    await settle();
    expect(b.grant.isActive()).toBe(false);
    await b.member.tick();
    expect(b.grant.isActive()).toBe(true);
    expect(b.grant.current()).toEqual(a.grant.current());
    // Audited once, where it was armed.
    expect(a.audit.find("auto_approve", "granted")).toHaveLength(1);
    expect(b.audit.find("auto_approve", "granted")).toEqual([]);
    // Switched off on B (any admitted user may): A follows at its tick.
    clock.t += 1000;
    expect(b.grant.command("off", owner("teams", "bob@x"))).toMatch(/Auto-approve is off/);
    await settle();
    await a.member.tick();
    expect(a.grant.isActive()).toBe(false);
    expect(b.audit.find("auto_approve", "revoked")).toHaveLength(1);
    expect(a.audit.find("auto_approve", "revoked")).toEqual([]);
    await close(a, b);
  });

  it("a gateway that joins later takes the grant in force; the lapse is told once, where it was armed", async () => {
    const url = await db.server.createDatabase();
    const clock = new ManualClock();
    const a = await gateway(url, clock, "gw-a");
    const told: string[] = [];
    a.grant.command("on 10m", owner("webchat", "op", told));
    await settle();
    const c = await gateway(url, clock, "gw-c");
    expect(c.grant.isActive()).toBe(true);
    clock.t += 10 * MIN;
    expect(a.grant.isActive()).toBe(false);
    expect(c.grant.isActive()).toBe(false);
    expect(told).toEqual([GRANT_LAPSED]);
    expect(a.audit.find("auto_approve", "expired")).toHaveLength(1);
    expect(c.audit.find("auto_approve", "expired")).toEqual([]);
    // The stale row stays expired for a gateway reading it later.
    await c.member.tick();
    expect(c.grant.isActive()).toBe(false);
    await close(a, c);
  });

  it("a malformed shared row is ignored, and a gateway that left shares nothing more", async () => {
    const url = await db.server.createDatabase();
    const clock = new ManualClock();
    const a = await gateway(url, clock, "gw-a");
    const b = await gateway(url, clock, "gw-b");
    await a.store.routes.put({ ...GRANT_ROW, address: { atMs: "soon" }, owner: "" });
    await b.member.tick();
    expect(b.grant.isActive()).toBe(false);
    expect(b.logger.entries.some((e) => e.message.includes("shared auto-approve row is malformed"))).toBe(
      true,
    );
    await a.member.leave();
    a.grant.command("on", owner("slack", "U1"));
    await settle();
    await b.member.tick();
    expect(b.grant.isActive()).toBe(false);
    await a.store.close();
    await close(b);
  });
});
