/**
 * Teams' LiveSurface on a recording Connector double: which Connector failures count as Teams
 * refusing an edit (only then is the answer posted anew: one that may have landed is not shown
 * twice), the [OPTIONS:] chips card, posted after the answer, resolved against the labels it
 * offered, and a table too long for one message's grid shown as cards.
 */
import { describe, expect, it } from "vitest";
import { MemoryLogger } from "../../src/messaging/base/logger.js";
import { TurnParts } from "../../src/messaging/channel/delivery.js";
import { MemoryAuditSink } from "../../src/messaging/security/audit.js";
import { ChoiceBook } from "../../src/teams/cards.js";
import type { OutboundActivity, TeamsReference } from "../../src/teams/client.js";
import { TeamsSendError } from "../../src/teams/errors.js";
import { teamsLiveSurface } from "../../src/teams/live-surface.js";
import type { TeamsSender } from "../../src/teams/outbox.js";
import { TeamsOutbox } from "../../src/teams/outbox.js";
import { TeamsRenderer } from "../../src/teams/renderer.js";
import { ManualClock } from "../helpers/manual-clock.js";

class Sender implements TeamsSender {
  readonly sent: OutboundActivity[] = [];
  failUpdate: unknown = null;
  async send(_r: TeamsReference, activity: OutboundActivity): Promise<string> {
    this.sent.push(activity);
    return `m${this.sent.length}`;
  }
  async update(): Promise<void> {
    if (this.failUpdate) throw this.failUpdate;
  }
  async typing(): Promise<void> {}
}

function outboxOn(sender: Sender): TeamsOutbox {
  return new TeamsOutbox({
    sender,
    address: {
      conversationId: "a:1",
      serviceUrl: "https://smba.example/amer/",
      userAccountId: "29:u",
      identity: "ann@contoso.example",
      botId: "28:bot",
    },
    audit: new MemoryAuditSink(),
    logger: new MemoryLogger(),
  });
}

function setup() {
  const clock = new ManualClock();
  const sender = new Sender();
  const choices = new ChoiceBook();
  const renderer = new TeamsRenderer({
    outbox: outboxOn(sender),
    owner: false,
    choices,
    audit: new MemoryAuditSink(),
    logger: new MemoryLogger(),
    clock,
  });
  return { clock, sender, choices, renderer };
}

describe("teams live surface", () => {
  it("only a Connector answer refusing the call is a refusal; a 5xx or the network may have landed", () => {
    const surface = teamsLiveSurface({
      outbox: outboxOn(new Sender()),
      owner: false,
      choices: new ChoiceBook(),
      audit: new MemoryAuditSink(),
      logger: new MemoryLogger(),
      typingEveryMs: 3000,
      parts: TurnParts.unrecorded(),
    });
    for (const status of [400, 403, 404, 412, 429])
      expect(surface.refused(new TeamsSendError(status, "x"))).toBe(true);
    for (const status of [0, 500, 502, 504])
      expect(surface.refused(new TeamsSendError(status, "x"))).toBe(false);
    expect(surface.refused(new Error("wrapped", { cause: new TeamsSendError(404, "gone") }))).toBe(true);
    expect(surface.refused(new Error("no status"))).toBe(false);
  });

  it("an answer whose live message Teams refused is posted anew; one that may have landed is not", async () => {
    for (const [failure, reposted] of [
      [new TeamsSendError(404, "gone"), true],
      [new TeamsSendError(0, "could not be reached"), false],
    ] as const) {
      const { clock, sender, renderer } = setup();
      await renderer.onTurnStart();
      await renderer.onTextChunk("Partial");
      await clock.advance(0);
      expect(sender.sent.map((a) => a.text)).toEqual([expect.stringContaining("Partial")]);
      sender.failUpdate = failure;
      await renderer.onTextChunk(" answer.");
      await renderer.onDone("end_turn");
      await renderer.close();
      const answers = sender.sent.slice(1).map((a) => a.text);
      expect(answers).toEqual(reposted ? ["Partial answer.\n\n_Finished in 0s_"] : []);
      expect(renderer.deliveryFailed).toBe(!reposted);
    }
  });

  it("[OPTIONS:] come as a chips card after the answer, resolved against the labels it offered", async () => {
    const { sender, choices, renderer } = setup();
    await renderer.onTurnStart();
    await renderer.onTextChunk("Which one?\n[OPTIONS: Red | Blue]");
    await renderer.onDone("end_turn");
    await renderer.close();
    expect(sender.sent.map((a) => a.text)).toEqual(["Which one?\n\n_Finished in 0s_", undefined]);
    expect(JSON.stringify(sender.sent[1]?.attachments)).toContain('"parley":"option"');
    expect(choices.take("m2", "a:1", 1)).toBe("Blue");
  });

  it("a table whose grid one message cannot hold is shown as cards; a small one stays a grid", async () => {
    // Short source rows, padded in the grid to the one long name: 700 rows make a grid past a message.
    const table = (rows: number) =>
      `| name | v |\n|---|---|\n| ${"n".repeat(20)} | 1 |\n${Array.from({ length: rows }, (_, i) => `| r${i} | 1 |`).join("\n")}\n`;
    for (const [rows, grid] of [
      [3, true],
      [700, false],
    ] as const) {
      const { sender, renderer } = setup();
      await renderer.onTurnStart();
      await renderer.onTextChunk(`Rows:\n\n${table(rows)}\nDone.`);
      await renderer.onDone("end_turn");
      await renderer.close();
      const shown = sender.sent.map((a) => a.text ?? "").join("\n");
      expect(shown.includes("```")).toBe(grid);
      expect(shown.includes("- v: 1")).toBe(!grid);
      expect(shown).toContain("r2");
    }
  });
});
