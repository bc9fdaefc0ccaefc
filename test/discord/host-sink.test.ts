/**
 * Discord in channel-server mode: an authorized message goes to the agent host's sink (not to an
 * agent turn), and the host's reply and reaction land through Discord's own renderer and REST.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import type { SinkConversation, SinkMessage, TurnSink } from "../../src/messaging/channel/turn-sink.js";
import type { JsonValue } from "../../src/messaging/store/port.js";
import type { Stack } from "./helpers.js";
import { ALICE, DM, startStack } from "./helpers.js";

let stack: Stack | undefined;
afterEach(async () => {
  await stack?.close();
  stack = undefined;
});

/** A host that keeps what it is handed: the messages, and a way back into their conversation. */
class RecordingSink implements TurnSink {
  readonly commands: ReadonlySet<string> = new Set(["help"]);
  readonly taken: SinkMessage[] = [];
  private open: ((address: JsonValue) => SinkConversation) | undefined;
  attach(_channel: string, open: (address: JsonValue) => SinkConversation): void {
    this.open = open;
  }
  async take(message: SinkMessage): Promise<{ pushed: Promise<boolean> }> {
    this.taken.push(message);
    return { pushed: Promise.resolve(true) };
  }
  port(address: JsonValue): SinkConversation {
    if (!this.open) throw new Error("not attached");
    return this.open(address);
  }
}

describe("discord: channel-server mode", () => {
  it("hands an authorized message to the host; the host's reply and reaction land in the DM", async () => {
    const sink = new RecordingSink();
    stack = await startStack({ sink });
    const id = stack.fake.userMessage({ channelId: DM, userId: ALICE, content: "ping from my phone" });
    await vi.waitFor(() => expect(sink.taken).toHaveLength(1), { timeout: 5000 });
    const taken = sink.taken[0] as SinkMessage;
    expect(taken).toMatchObject({ channel: "discord", text: "ping from my phone", messageId: id });
    // No agent ran: the message was the host's.
    expect(stack.startedKeys).toEqual([]);

    const port = sink.port(taken.address);
    expect(await port.react(id, "👍")).toBe(true);
    expect(stack.fake.userMessages.get(id)?.reactions.has("👍")).toBe(true);
    expect(await port.render("pong, **from the host**", { turnId: "host:1" })).toBe(true);
    const shown = stack.fake.channelMessages(DM).map((m) => m.content);
    expect(shown).toContain("pong, **from the host**");
  });
});
