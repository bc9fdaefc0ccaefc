/**
 * Approvals and pickers across gateways (issue 26): two Teams gateways on one PostgreSQL, both
 * behind the same bot (a load balancer may hand any activity to either). The conversation is
 * served by the gateway that received its message; a card press that reaches the other gateway is
 * forwarded to it over LISTEN/NOTIFY and settles the turn there, exactly once. Real botbuilder
 * against the Teams fake, real stores and memberships; only the agent is scripted.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import { ClusterMember, signalsOf } from "../../src/gateway/cluster.js";
import { shareGrant } from "../../src/gateway/shared-grant.js";
import { RECEIPT_EXPIRED } from "../../src/messaging/approval/approvals.js";
import { AutoApproveGrant } from "../../src/messaging/approval/grant.js";
import { realClock } from "../../src/messaging/base/clock.js";
import { MemoryLogger } from "../../src/messaging/base/logger.js";
import { PICK_REFUSAL_TEXT } from "../../src/messaging/channel/picker.js";
import { PRESS_UNCONFIRMED } from "../../src/messaging/channel/press-forwarding.js";
import { MemoryAuditSink } from "../../src/messaging/security/audit.js";
import { emptyRow, MemorySessionStore } from "../../src/messaging/session/session-store.js";
import type { ScriptedTurn } from "../../src/providers/scripted.js";
import { openStore } from "../../src/store/index.js";
import type { SqlParleyStore } from "../../src/store/sql/store.js";
import type { Json, ShownMessage } from "../fakes/teams/server.js";
import { FakeTeams } from "../fakes/teams/server.js";
import { permissionRequest } from "../helpers/events.js";
import { useTestPostgres } from "../helpers/use-postgres.js";
import type { Stack, StackOptions } from "./helpers.js";
import {
  approvalCard,
  cardButton,
  cardTexts,
  done,
  FAST_OR_DEEP,
  seen,
  startStack,
  text,
  visible,
} from "./helpers.js";

const pg = useTestPostgres();

interface Gateway {
  stack: Stack;
  member: ClusterMember;
  grant: AutoApproveGrant;
}

let fake: FakeTeams | undefined;
let gateways: Gateway[] = [];

afterEach(async () => {
  for (const g of gateways) {
    await g.member.leave();
    await g.stack.close();
  }
  gateways = [];
  await fake?.close();
  fake = undefined;
});

async function gateway(url: string, name: string, o: StackOptions = {}): Promise<Gateway> {
  const parley = (await openStore("/nonexistent-home", { url })) as SqlParleyStore;
  const member = await ClusterMember.join({
    registry: parley.cluster,
    signals: signalsOf(parley),
    clock: realClock,
    logger: new MemoryLogger(),
    name,
    onFenced: () => {},
  });
  fake ??= await new FakeTeams().start();
  // The gateway's one auto-approve grant, shared with the others as the gateway wires it.
  const grant = new AutoApproveGrant({ audit: new MemoryAuditSink() });
  await shareGrant({
    grant,
    routes: parley.routes,
    logger: new MemoryLogger(),
    onTick: (read) => member.onTick(read),
    serving: () => member.serving,
  });
  const stack = await startStack({ ...o, fake, parley, ownership: member, grant });
  const g = { stack, member, grant };
  gateways.push(g);
  return g;
}

const toolTurn: ScriptedTurn = {
  steps: [text("Let me clean up."), permissionRequest({ requestId: "r1", title: "rm -rf build" })],
  onPermission: { approve: [text("Removed."), done], deny: [text("Kept everything."), done] },
};

/** Two gateways; Alice's message reached A, whose turn now shows its approval card. */
async function promptOnA(): Promise<{ a: Gateway; b: Gateway; prompt: ShownMessage }> {
  const url = await pg.server.createDatabase();
  const a = await gateway(url, "gw-a", { turns: [toolTurn] });
  const b = await gateway(url, "gw-b");
  await a.stack.driver.post(a.stack.driver.message(a.stack.alice, "clean up"));
  return { a, b, prompt: await approvalCard(a.stack) };
}

function shownNow(s: Stack, id: string): ShownMessage {
  return s.fake.shown(s.fake.personalConversation(s.alice)).find((m) => m.id === id) as ShownMessage;
}

describe("teams on two gateways: presses reach the gateway running the turn", () => {
  it("an Approve pressed through the other gateway runs the tool once, on the gateway that asked", async () => {
    const { a, b, prompt } = await promptOnA();
    // Read before pressing: the shown card is live and loses its buttons once decided.
    const approve = cardButton(prompt, "Approve");
    const press = await b.stack.driver.post(b.stack.driver.submit(b.stack.alice, prompt.id, approve));
    expect(press.status).toBe(200);
    await seen(a.stack.fake, "Removed.");
    expect(a.stack.provider.answers).toEqual([{ requestId: "r1", verdict: "approve" }]);
    // B never ran a turn or judged the press itself.
    expect(b.stack.startedKeys).toEqual([]);
    expect(b.stack.provider.answers).toEqual([]);
    expect(cardTexts(shownNow(a.stack, prompt.id))).toEqual({
      text: expect.stringContaining("Approved (this once)"),
      buttons: [],
    });
    // A second press, again through B, finds the prompt decided: the neutral receipt, nothing re-run.
    await b.stack.driver.post(b.stack.driver.submit(b.stack.alice, prompt.id, approve));
    await seen(a.stack.fake, RECEIPT_EXPIRED);
    expect(a.stack.provider.answers).toHaveLength(1);
    expect(
      a.stack.fake
        .shown(a.stack.fake.personalConversation(a.stack.alice))
        .filter((m) => m.text.includes("Removed.")),
    ).toHaveLength(1);
  });

  it("the owner's Approve + auto-approve through the other gateway approves there and arms the one grant for both", async () => {
    const { a, b, prompt } = await promptOnA();
    await b.stack.driver.post(
      b.stack.driver.submit(b.stack.alice, prompt.id, cardButton(prompt, "Approve + auto-approve")),
    );
    await seen(a.stack.fake, "Removed.");
    expect(a.stack.provider.answers).toEqual([{ requestId: "r1", verdict: "approve" }]);
    await seen(a.stack.fake, "Auto-approve is ON");
    expect(b.grant.isActive()).toBe(true);
    // A, which runs this conversation's turns, follows at its next heartbeat tick.
    await vi.waitFor(() => expect(a.grant.isActive()).toBe(true), { timeout: 5_000 });
    expect(a.grant.current()).toEqual(b.grant.current());
  });

  it("a forged nonce forwarded to the serving gateway approves nothing", async () => {
    const { a, b, prompt } = await promptOnA();
    const deny = cardButton(prompt, "Deny");
    const forged = { ...(cardButton(prompt, "Approve") as Record<string, Json>), n: "not-the-nonce" };
    await b.stack.driver.post(b.stack.driver.submit(b.stack.alice, prompt.id, forged));
    await seen(a.stack.fake, RECEIPT_EXPIRED);
    expect(a.stack.provider.answers).toEqual([]);
    // The real button still works afterwards.
    await b.stack.driver.post(b.stack.driver.submit(b.stack.alice, prompt.id, deny));
    await seen(a.stack.fake, "Kept everything.");
    expect(a.stack.provider.answers).toEqual([{ requestId: "r1", verdict: "deny" }]);
  });

  it("a model list posted by one gateway is chosen from through the other", async () => {
    const url = await pg.server.createDatabase();
    const a = await gateway(url, "gw-a", {
      turns: [[text("hi"), done]],
      provider: { modelMenu: FAST_OR_DEEP },
    });
    const b = await gateway(url, "gw-b", { provider: { modelMenu: FAST_OR_DEEP } });
    await a.stack.driver.post(a.stack.driver.message(a.stack.alice, "hello"));
    await seen(a.stack.fake, "hi");
    await vi.waitFor(() => expect(a.stack.sessions.isBusy(a.stack.startedKeys[0] ?? "")).toBe(false));
    await a.stack.driver.post(a.stack.driver.message(a.stack.alice, "/model"));
    const conversation = a.stack.fake.personalConversation(a.stack.alice);
    const list = await vi.waitFor(() => {
      const found = a.stack.fake
        .shown(conversation)
        .find((m) => cardTexts(m).buttons.some((t) => t.includes("Deep")));
      if (!found) throw new Error("no model card");
      return found;
    });
    const deep = cardTexts(list).buttons.findIndex((t) => t.includes("Deep"));
    await b.stack.driver.post(b.stack.driver.submit(b.stack.alice, list.id, { parley: "model", i: deep }));
    await vi.waitFor(() => expect(a.stack.provider.modelChoices).toEqual(["deep"]));
    await vi.waitFor(() => expect(cardTexts(shownNow(a.stack, list.id)).buttons).toEqual([]));
    expect(b.stack.provider.modelChoices).toEqual([]);
    // The list is used up on the gateway that posted it: a second press is refused there.
    await b.stack.driver.post(b.stack.driver.submit(b.stack.alice, list.id, { parley: "model", i: deep }));
    await seen(a.stack.fake, "That list was already used: ask for a new one.");
    expect(a.stack.provider.modelChoices).toEqual(["deep"]);
  });

  it("a press for a gateway that no longer judges presses approves nothing and says so", async () => {
    const { a, b, prompt } = await promptOnA();
    const approve = cardButton(prompt, "Approve");
    // A's channel stops (a graceful stop denies its open prompt) while its membership still holds
    // the conversation: a press forwarded to it now finds no Teams there.
    await a.stack.stop();
    await b.stack.driver.post(b.stack.driver.submit(b.stack.alice, prompt.id, approve));
    await seen(b.stack.fake, PRESS_UNCONFIRMED);
    expect(a.stack.provider.answers.filter((x) => x.verdict === "approve")).toEqual([]);
  });

  it("a session list offered by one gateway is chosen from through the other", async () => {
    const url = await pg.server.createDatabase();
    const a = await gateway(url, "gw-a", {
      store: seededWebChat(),
      turns: [[text("continuing the trip"), done]],
    });
    const b = await gateway(url, "gw-b", { store: seededWebChat() });
    await a.stack.driver.post(a.stack.driver.message(a.stack.alice, "/sessions"));
    const conversation = a.stack.fake.personalConversation(a.stack.alice);
    const list = await vi.waitFor(() => {
      const found = a.stack.fake
        .shown(conversation)
        .find((m) => cardTexts(m).buttons.includes("Plan the trip"));
      if (!found) throw new Error("no session list yet");
      return found;
    });
    await b.stack.driver.post(
      b.stack.driver.submit(b.stack.alice, list.id, cardButton(list, "Plan the trip")),
    );
    // Settled by A, which offered it: the card becomes the outcome, nothing said by B.
    await vi.waitFor(() => expect(cardTexts(shownNow(a.stack, list.id)).buttons).toEqual([]));
    expect(visible(a.stack.fake)).not.toContain(PICK_REFUSAL_TEXT.unknown);
    await a.stack.driver.post(a.stack.driver.message(a.stack.alice, "where were we?"));
    await seen(a.stack.fake, "continuing the trip");
    expect(a.stack.startedKeys).toEqual([WEB_SESSION]);
  });
});

const WEB_SESSION = "webchat:default:direct:aaa111";

/** One web chat session this Teams chat may continue (the allow-list names Alice alone). */
function seededWebChat(): MemorySessionStore {
  return new MemorySessionStore({
    rows: [
      {
        ...emptyRow(WEB_SESSION),
        title: "Plan the trip",
        titleKind: "manual",
        lastActiveMs: 200,
        originLink: { channelType: "webchat", conversationId: "aaa111" },
      },
    ],
  });
}
