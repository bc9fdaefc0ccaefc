/**
 * Exactly once under a kill after the answer landed (issue #31): a turn whose answer is delivered
 * completes its message "answered" and writes the answer's history line in one step, so a kill at
 * any later point (the post-turn steps, the turn's ordinary completion) leaves nothing to redo: the
 * restart runs nothing again, tells the sender nothing ("not run again"), and the history the next
 * turn's agent reads holds the answer once. A kill just before that step (the answer on screen, the
 * step not written) is the one window left: the message runs again, and its answer replaces itself
 * (the same part, edited or left alone), never posted twice.
 *
 * A "kill" here is a gateway that stops making progress at that point forever (its promise never
 * settles); the "restart" is a second hub on a second handle of the same store, as a new process
 * opens it.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { commandTable, defineCommands } from "../../../src/messaging/channel/command-kit.js";
import type { TurnParts } from "../../../src/messaging/channel/delivery.js";
import { ConversationHub } from "../../../src/messaging/channel/hub.js";
import type { ChannelSurface, Conversation, TurnStart } from "../../../src/messaging/channel/surface.js";
import { buildDmSessionKey } from "../../../src/messaging/session/keys.js";
import { SessionManager } from "../../../src/messaging/session/session-manager.js";
import type { ParleyStore, TranscriptLine } from "../../../src/messaging/store/port.js";
import type { PipelineProvider, PostTurnStep } from "../../../src/messaging/turn/pipeline.js";
import { RecordingRenderer } from "../../../src/messaging/turn/recording-renderer.js";
import type { ScriptStep } from "../../../src/providers/scripted.js";
import { ScriptedProvider } from "../../../src/providers/scripted.js";
import { openTestStore, testChannelContext } from "../../helpers/channel-context.js";

const CHANNEL = "wecom";
const USER = "u1";
const never = () => new Promise<never>(() => {});

/** A platform in memory: every message the bot created, by id, and every edit. */
class Platform {
  readonly messages = new Map<string, string>();
  readonly edits: string[] = [];
  private next = 1;
  create(text: string): string {
    const id = `p${this.next++}`;
    this.messages.set(id, text);
    return id;
  }
}

/** Posts the whole answer as the turn's one part when it closes, through the ledger (TurnParts). */
class PartsRenderer extends RecordingRenderer {
  private text = "";
  constructor(
    private readonly parts: TurnParts,
    private readonly platform: Platform,
    private readonly afterLanded: () => Promise<void>,
  ) {
    super();
  }
  override async onTextChunk(text: string): Promise<void> {
    this.text += text;
    await super.onTextChunk(text);
  }
  override async close(): Promise<void> {
    const text = this.text;
    await this.parts.post(text, {
      create: async () => this.platform.create(text),
      replace: async (id) => {
        this.platform.edits.push(id);
        this.platform.messages.set(id, text);
        return true;
      },
    });
    // The answer is on the platform and in the ledger; what follows may be cut short.
    await this.afterLanded();
  }
}

class MemorySurface implements ChannelSurface<string> {
  readonly replies: string[] = [];
  constructor(
    private readonly platform: Platform,
    private readonly afterLanded: () => Promise<void>,
  ) {}
  conversation(id: string): Conversation {
    return { route: id, direct: true, link: { channelType: CHANNEL, conversationId: id } };
  }
  sessionKey(id: string, generation: number): string {
    return buildDmSessionKey(CHANNEL, "default", id, { gen: generation });
  }
  async reply(_id: string, text: string): Promise<boolean> {
    this.replies.push(text);
    return true;
  }
  newRenderer(_address: string, turn: TurnStart<unknown>): RecordingRenderer {
    return new PartsRenderer(turn.parts, this.platform, this.afterLanded);
  }
}

const answer: ScriptStep[] = [
  { type: "text", text: "the answer" },
  { type: "complete", stopReason: "end_turn" },
];

const stores: ParleyStore[] = [];
afterEach(async () => {
  // The "killed" gateways' handles are closed too (their hung turns hold nothing else).
  for (const s of stores.splice(0)) await s.close();
});

/** One gateway process over the store in `home`: its hub, its agent's prompts, what it said. */
async function gateway(
  home: string,
  platform: Platform,
  o: { afterLanded?: () => Promise<void>; postTurn?: PostTurnStep[] } = {},
) {
  const parley = await openTestStore(home);
  stores.push(parley);
  const providers: ScriptedProvider[] = [];
  const sessions = new SessionManager<PipelineProvider>({
    createProvider: () => {
      const p = new ScriptedProvider([answer, answer]);
      providers.push(p);
      return p;
    },
  });
  const ctx = testChannelContext(
    {
      name: CHANNEL,
      docs: "",
      configSchema: { parse: (x: unknown) => x } as never,
      secretEnv: [],
      missing: () => [],
      load: () => Promise.reject(new Error("not loaded")),
    },
    { sessions, parley, home, ...(o.postTurn ? { pipeline: { postTurn: o.postTurn } } : {}) },
  );
  const surface = new MemorySurface(platform, o.afterLanded ?? (async () => {}));
  const hub = new ConversationHub<string>({
    surface,
    commands: defineCommands(commandTable(["new", "stop", "help"]), { prefixes: ["/"] }),
    ctx,
    isOwner: () => true,
    helpFooter: "",
  });
  return {
    hub,
    parley,
    surface,
    key: hub.keyOf(USER),
    /** What this process's agent was asked. */
    prompts: () => providers.flatMap((p) => p.prompts),
  };
}

/** The first gateway takes the message in and is "killed" at the point `stall` names. */
async function killedAfterDelivery(
  home: string,
  platform: Platform,
  stall: { afterLanded?: () => Promise<void>; postTurn?: PostTurnStep[] },
) {
  const first = await gateway(home, platform, stall);
  await first.hub.receive({ address: USER, userId: USER, text: "the question" }, { platformId: "msg-1" });
  await vi.waitFor(() => expect([...platform.messages.values()]).toEqual(["the answer"]));
  const [row] = await first.parley.intake.unfinished();
  return { first, row };
}

function agentLines(lines: readonly TranscriptLine[]): string[] {
  return lines.flatMap((l) => (l.entry.kind === "agent" ? [l.entry.text] : []));
}

describe("a kill after the answer landed", () => {
  it("during the post-turn steps: the restart runs nothing again and the history holds the answer", async () => {
    const home = mkdtempSync(join(tmpdir(), "parley-answered-"));
    const platform = new Platform();
    let stalled = false;
    const hang: PostTurnStep = {
      name: "killed_here",
      run: () => {
        stalled = true;
        return never();
      },
    };
    const first = await gateway(home, platform, { postTurn: [hang] });
    await first.hub.receive({ address: USER, userId: USER, text: "the question" }, { platformId: "msg-1" });
    await vi.waitFor(() => expect(stalled).toBe(true));
    // The turn never reached its ordinary completion, and the message is done all the same.
    expect(await first.parley.intake.countUnfinished()).toBe(0);

    const second = await gateway(home, platform);
    await second.hub.resume();
    expect(second.prompts()).toEqual([]);
    expect(second.surface.replies).toEqual([]);
    expect([...platform.messages.values()]).toEqual(["the answer"]);
    const lines = await second.parley.transcripts.recent(first.key, 10);
    expect(lines.map((l) => l.entry.kind)).toEqual(["user", "agent"]);
    expect(agentLines(lines)).toEqual(["the answer"]);
    // Delivered again by the platform after the restart: a redelivery, not a new message.
    const again = await second.hub.receive(
      { address: USER, userId: USER, text: "the question" },
      { platformId: "msg-1" },
    );
    await again.turn;
    expect(second.prompts()).toEqual([]);
  });

  it("cut short twice before, killed after the answer: no 'not run again' notice for an answered message", async () => {
    const home = mkdtempSync(join(tmpdir(), "parley-answered-"));
    const platform = new Platform();
    const first = await gateway(home, platform, { postTurn: [{ name: "killed_here", run: never }] });
    // Two earlier runs of this message were cut short (the journal counts claims): one more
    // unfinished start would give it up (maxAttempts 3).
    const ticket = await first.hub.accept(
      { address: USER, userId: USER, text: "the question" },
      { platformId: "msg-1" },
    );
    if (!ticket) throw new Error("not journaled");
    await first.parley.intake.claim(ticket.id);
    await first.parley.intake.claim(ticket.id);
    void first.hub.handleInOrder({ address: USER, userId: USER, text: "the question", tickets: [ticket] });
    await vi.waitFor(async () => expect(await first.parley.intake.countUnfinished()).toBe(0));

    const second = await gateway(home, platform);
    await second.hub.resume();
    expect(second.surface.replies.filter((r) => r.includes("not run again"))).toEqual([]);
    expect(second.prompts()).toEqual([]);
    expect(agentLines(await second.parley.transcripts.recent(first.key, 10))).toEqual(["the answer"]);
  });

  it("just before its one step (answer on screen, nothing written): it runs again, its answer replaces itself", async () => {
    const home = mkdtempSync(join(tmpdir(), "parley-answered-"));
    const platform = new Platform();
    const { first, row } = await killedAfterDelivery(home, platform, { afterLanded: never });
    expect(row?.attempts).toBe(1);

    const second = await gateway(home, platform);
    await second.hub.resume();
    await vi.waitFor(async () => expect(await second.parley.intake.countUnfinished()).toBe(0));
    expect(second.prompts()).toEqual(["the question"]);
    // The same part found landed with the same text: left alone, not posted a second time.
    expect([...platform.messages.values()]).toEqual(["the answer"]);
    expect(second.surface.replies).toEqual([]);
    expect(agentLines(await second.parley.transcripts.recent(first.key, 10))).toEqual(["the answer"]);
  });
});
