/**
 * The fake's activities are what the official SDK reads as Teams activities: each one, signed by the
 * fake and posted to the endpoint, passes botbuilder's CloudAdapter (its token validation and its
 * activity parse) and reaches the TeamsActivityHandler route its type and shape name, with the
 * Teams helpers reading the tenant, team and channel where Teams puts them.
 */
import type { TurnContext } from "botbuilder";
import { TeamsActivityHandler, teamsGetChannelId, teamsGetTeamInfo, teamsGetTenant } from "botbuilder";
import { afterEach, describe, expect, it } from "vitest";
import { MemoryLogger } from "../../src/messaging/base/logger.js";
import { MemoryAuditSink } from "../../src/messaging/security/audit.js";
import { MessagingEndpoint } from "../../src/teams/endpoint.js";
import { TeamsDriver } from "../fakes/teams/driver.js";
import { FakeTeams } from "../fakes/teams/server.js";
import { testDrops } from "../helpers/drops.js";
import { teamsClientOn } from "./helpers.js";

let close: (() => Promise<void>) | undefined;
afterEach(async () => {
  await close?.();
  close = undefined;
});

/** What the SDK's handler saw, one line per route taken. */
type Seen = Record<string, unknown>;

async function sdkBehindEndpoint(): Promise<{ fake: FakeTeams; driver: TeamsDriver; seen: Seen[] }> {
  const fake = await new FakeTeams().start();
  const seen: Seen[] = [];
  const handler = new TeamsActivityHandler();
  const base = (ctx: TurnContext) => ({
    channelId: ctx.activity.channelId,
    tenant: teamsGetTenant(ctx.activity)?.id,
    conversationType: ctx.activity.conversation.conversationType,
    aadObjectId: ctx.activity.from.aadObjectId,
  });
  handler.onMessage(async (ctx, next) => {
    seen.push({
      route: "message",
      ...base(ctx),
      text: ctx.activity.text,
      value: ctx.activity.value,
      attachments: (ctx.activity.attachments ?? []).map((a) => a.contentType),
      teamChannel: teamsGetChannelId(ctx.activity),
      team: teamsGetTeamInfo(ctx.activity)?.id,
    });
    await next();
  });
  handler.onTeamsMembersAddedEvent(async (members, _team, ctx, next) => {
    seen.push({ route: "membersAdded", ...base(ctx), members: members.map((m) => m.id) });
    await next();
  });
  handler.onInstallationUpdateAdd(async (ctx, next) => {
    seen.push({ route: "installAdd", ...base(ctx) });
    await next();
  });
  handler.onInstallationUpdateRemove(async (ctx, next) => {
    seen.push({ route: "installRemove", ...base(ctx) });
    await next();
  });
  handler.onTyping(async (ctx, next) => {
    seen.push({ route: "typing", ...base(ctx) });
    await next();
  });
  const client = teamsClientOn(fake);
  const endpoint = new MessagingEndpoint({
    listen: "127.0.0.1:0",
    adapter: client.adapter,
    tokenIssuer: fake.tokenIssuer,
    logic: async (ctx) => {
      await handler.run(ctx);
      return undefined;
    },
    drops: testDrops(new MemoryAuditSink(), "teams"),
    logger: new MemoryLogger(),
  });
  await endpoint.start();
  close = async () => {
    await endpoint.close();
    await fake.close();
  };
  return { fake, driver: new TeamsDriver(fake, endpoint.url), seen };
}

describe("teams: botbuilder reads the fake's activities", () => {
  it("every activity shape the driver sends takes the SDK route of its kind", async () => {
    const { fake, driver, seen } = await sdkBehindEndpoint();
    const alice = fake.addUser("Alice");
    const activities = [
      driver.message(alice, "hello"),
      driver.message(alice, "hi channel", { kind: "channel" }),
      driver.submit(alice, "card-1", { parley: "option", i: 0 }),
      driver.fileMessage(alice, "notes.txt", "https://files.example/notes.txt"),
      ...driver.install(alice),
      driver.uninstall(alice),
      driver.typing(alice),
    ];
    for (const activity of activities) expect((await driver.post(activity)).status).toBe(200);
    const common = { channelId: "msteams", tenant: fake.tenantId, aadObjectId: alice.aadObjectId };
    expect(seen).toEqual([
      expect.objectContaining({ route: "message", ...common, conversationType: "personal", text: "hello" }),
      expect.objectContaining({
        route: "message",
        conversationType: "channel",
        teamChannel: "19:general@thread.tacv2",
        team: "19:team@thread.tacv2",
      }),
      expect.objectContaining({ route: "message", ...common, value: { parley: "option", i: 0 } }),
      expect.objectContaining({
        route: "message",
        attachments: ["application/vnd.microsoft.teams.file.download.info"],
      }),
      { route: "membersAdded", ...common, conversationType: "personal", members: [`28:${fake.appId}`] },
      { route: "installAdd", ...common, conversationType: "personal" },
      { route: "installRemove", ...common, conversationType: "personal" },
      { route: "typing", ...common, conversationType: "personal" },
    ]);
  });
});
