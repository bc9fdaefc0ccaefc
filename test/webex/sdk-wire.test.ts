/**
 * The fake's frames read by the official SDK's own code: the U2C host map goes through webex-core's
 * Services._formatReceivedHostmap and ServiceCatalog.findClusterId, the cluster through
 * @webex/common's getHydraClusterString, the ids through buildHydraMessageId / constructHydraId, used
 * the way plugin-messages getMessageEvent (the activity's id) and plugin-attachment-actions
 * getattachmentActionEvent (the activity's id, the parent's id) use them. The ids parley asked for
 * must be the SDK's, on the US and a non-US cluster alike. (The full `webex` package brings meetings
 * and calling, ~530 MB; these two are the parts that hold the parsing.)
 */
import { createRequire } from "node:module";
import { describe, expect, it } from "vitest";
import { catalogSchema, clusterIdOf, hydraCluster, hydraId } from "../../src/webex/wire.js";
import { EU_CLUSTER } from "../fakes/webex/server.js";
import { ALICE, DM, done, text, until, webexLab } from "./harness.js";

const require = createRequire(import.meta.url);

interface Common {
  getHydraClusterString(webex: unknown, conversationUrl: string): string;
  buildHydraMessageId(uuid: string, cluster: string): string;
  constructHydraId(type: string, id: string, cluster: string): string;
  hydraTypes: Record<"MESSAGE" | "ATTACHMENT_ACTION" | "ROOM", string>;
}
const common = require("@webex/common") as Common;
type Formatted = unknown[];
const Services = require("@webex/webex-core/dist/lib/services/services.js").default as {
  prototype: { _formatReceivedHostmap(this: object, hostmap: unknown): Formatted };
};
const ServiceCatalog = require("@webex/webex-core/dist/lib/services/service-catalog.js")
  .default as new () => {
  updateServiceUrls(group: string, formatted: Formatted): void;
  findClusterId(url: string): string | undefined;
};

/** The SDK's catalog loaded with a host map, as Services.updateServices loads the postauth group. */
function sdkWebex(hostmap: unknown) {
  const formatted = Services.prototype._formatReceivedHostmap.call(
    Object.create(Services.prototype),
    hostmap,
  );
  const catalog = new ServiceCatalog();
  catalog.updateServiceUrls("postauth", formatted);
  // What Services.getClusterId does: ask the instance's catalog.
  return { internal: { services: { getClusterId: (url: string) => catalog.findClusterId(url) } } };
}

interface Activity {
  id: string;
  verb: string;
  actor: { emailAddress?: string };
  object: Record<string, unknown>;
  target: { id: string; url: string } & Record<string, unknown>;
  parent?: { id: string; type: string };
}

const lab = webexLab();

describe("webex wire, read by the official SDK", () => {
  it("posts, shares and presses on the US and EU clusters: parley asks for exactly the SDK's ids", async () => {
    lab.fake.addRoom("room-eu", "direct", EU_CLUSTER);
    const c = await lab.channel({ turns: [[text("ok"), done]] });
    const notes = lab.fake.addFile({
      name: "n.txt",
      type: "text/plain",
      bytes: new TextEncoder().encode("x"),
      state: "clean",
    });
    const us = lab.fake.userMessage({ email: ALICE, roomId: DM, text: "hi" });
    const eu = lab.fake.userMessage({ email: ALICE, roomId: "room-eu", text: "hallo", files: [notes] });
    await until(() => lab.fake.botMessages().length >= 2, "both answered");
    for (const { messageId } of [us, eu])
      lab.fake.pressCard({
        email: ALICE,
        messageId,
        inputs: { "parley.kind": "approval", "parley.request": "r", "parley.nonce": "n", "parley.choice": 0 },
      });
    await until(() => c.audit.find("webex.approval", "refused").length === 2, "both presses judged");

    const webex = sdkWebex(lab.fake.catalog());
    const users = (lab.fake.activities as unknown as Activity[]).filter(
      (a) => a.actor.emailAddress === ALICE,
    );
    expect(users.map((a) => a.verb)).toEqual(["post", "share", "cardAction", "cardAction"]);
    const sdkMessageIds: string[] = [];
    const sdkActionIds: string[] = [];
    for (const a of users) {
      // No field the SDK does not know: the id is the activity's, the cluster the URL's.
      expect(a.object).not.toHaveProperty("id");
      expect(a.target).not.toHaveProperty("clusterId");
      const cluster = common.getHydraClusterString(webex, a.target.url);
      if (a.verb === "cardAction") {
        sdkActionIds.push(common.constructHydraId(common.hydraTypes.ATTACHMENT_ACTION, a.id, cluster));
        // The pressed message, as the SDK names it from the parent.
        const pressed = common.constructHydraId(common.hydraTypes.MESSAGE, a.parent?.id ?? "", cluster);
        expect([us.messageId, eu.messageId]).toContain(pressed);
      } else sdkMessageIds.push(common.buildHydraMessageId(a.id, cluster));
    }
    expect(sdkMessageIds).toEqual([us.messageId, eu.messageId]);
    const asked = (pattern: RegExp) =>
      lab.fake.callsTo("GET", pattern).map((call) => decodeURIComponent(call.path.split("/").pop() ?? ""));
    expect(asked(/^\/v1\/messages\//)).toEqual(sdkMessageIds);
    expect(asked(/^\/v1\/attachment\/actions\//)).toEqual(sdkActionIds);
    expect(
      lab.fake.callsTo("GET", /^\/v1\/(messages|attachment)\//).every((call) => call.status === 200),
    ).toBe(true);
  });

  it("parley's cluster rule and Hydra encoding agree with the SDK's on every host of the map", async () => {
    await lab.channel();
    const hostmap = lab.fake.catalog();
    const webex = sdkWebex(hostmap);
    const ours = catalogSchema.parse(hostmap);
    for (const host of ["conv-a.wbx2.com", "conv-k.wbx2.com"]) {
      const url = `https://${host}/conversation/api/v1/conversations/0f9c7a52-7f3e-4a4e-9d55-2c8e0d1b5a11`;
      const sdkCluster = common.getHydraClusterString(webex, url);
      const internal = clusterIdOf(ours, url);
      expect(internal).toBeDefined();
      expect(hydraCluster(internal ?? "")).toBe(sdkCluster);
      // Every uuid shape of byte value, including ones whose base64 has + and / (url-safe: - and _).
      for (const uuid of ["0f9c7a52-7f3e-4a4e-9d55-2c8e0d1b5a11", "~~~>>>???", "ÿþ"])
        expect(hydraId(sdkCluster, "MESSAGE", uuid)).toBe(common.buildHydraMessageId(uuid, sdkCluster));
    }
    expect(common.getHydraClusterString(webex, "https://conv-a.wbx2.com/x")).toBe("us");
  });
});
