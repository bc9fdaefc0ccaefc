/**
 * Idle rotation on Feishu (the gateway's `idleResetMinutes`): a conversation quiet past the gap
 * starts a fresh session with its next message, each conversation on its own clock (a group's gap
 * is the group's, never a member's DM). Rotation is decided AFTER the busy check: a message that
 * arrives after the gap while a turn still runs is steered into that turn, not sent to a session
 * minted under it; the key is re-derived only when a rotation happened.
 */
import { describe, expect, it } from "vitest";
import { ManualClock } from "../helpers/manual-clock.js";
import { dmChat, done, fakeFeishuLab, GROUP, OWNER, shown, text } from "./channel-harness.js";

const lab = fakeFeishuLab();
const MINUTE = 60_000;
const DM_KEY = `feishu:default:direct:${OWNER.openId}`;
const GROUP_KEY = `feishu:default:forum:${GROUP}`;

describe("idle rotation", () => {
  it("a DM quiet past the gap starts afresh; a group keeps its own clock", async () => {
    const clock = new ManualClock();
    const c = await lab.connected({
      clock,
      rotation: { idleMinutes: 30 },
      feishu: { allowGroup: true, allowedGroupIds: [GROUP] },
      turns: () => [
        [text("ok"), done],
        [text("ok again"), done],
      ],
    });
    lab.fake.pushMessage(OWNER, "first");
    await lab.fake.waitFor(() => shown(lab.fake, dmChat(OWNER)).length === 1, 5000, "the first answer");
    await clock.advance(20 * MINUTE);
    lab.fake.pushMessage(OWNER, "in the group", { chatType: "group", chatId: GROUP, mentionBot: true });
    await lab.fake.waitFor(() => shown(lab.fake, GROUP).length === 1, 5000, "the group answer");
    await clock.advance(11 * MINUTE);
    // 31 minutes since the DM's last message: a new generation. The group spoke 11 minutes ago.
    lab.fake.pushMessage(OWNER, "second");
    await lab.fake.waitFor(() => shown(lab.fake, dmChat(OWNER)).length === 2, 5000, "the second answer");
    lab.fake.pushMessage(OWNER, "again in the group", { chatType: "group", chatId: GROUP, mentionBot: true });
    await lab.fake.waitFor(() => shown(lab.fake, GROUP).length === 2, 5000, "the second group answer");
    expect([...c.providers.keys()]).toEqual([DM_KEY, GROUP_KEY, `${DM_KEY}:gen1`]);
    expect(c.providers.get(DM_KEY)?.prompts).toEqual(["first"]);
    expect(c.providers.get(`${DM_KEY}:gen1`)?.prompts).toEqual(["second"]);
    expect(c.providers.get(GROUP_KEY)?.prompts).toEqual(["in the group", "again in the group"]);
    // Persisted as /new persists it: a restart does not go back to the conversation left behind.
    expect(c.store.generationOf(DM_KEY)).toBe(1);
    expect(c.store.generationOf(GROUP_KEY)).toBe(0);
  });

  it("checked after the busy check: past the gap mid-turn the message is steered, and rotation waits", async () => {
    const clock = new ManualClock();
    const c = await lab.connected({
      clock,
      rotation: { idleMinutes: 30 },
      supportsSteer: true,
      provider: { timers: clock },
      turns: () => [
        [{ delayMs: 60 * MINUTE }, text("long job done"), done],
        [text("quick"), done],
      ],
    });
    lab.fake.pushMessage(OWNER, "long job");
    await lab.fake.waitFor(() => c.providers.get(DM_KEY)?.hasActiveTurn() === true, 5000, "the turn");
    await clock.advance(31 * MINUTE);
    const { event } = lab.fake.pushMessage(OWNER, "and one more thing");
    await lab.fake.waitFor(() => event.acked, 5000, "the steer journaled");
    await lab.fake.waitFor(() => c.providers.get(DM_KEY)?.steers.length === 1, 5000, "steered");
    expect([...c.providers.keys()]).toEqual([DM_KEY]);
    await clock.advance(29 * MINUTE);
    await lab.fake.waitFor(() => shown(lab.fake).some((v) => v.includes("long job done")), 5000, "done");
    await lab.fake.waitFor(() => !c.sessions.isBusy(DM_KEY), 5000, "idle");
    // The steer counted as activity 29 minutes ago: the same session answers.
    lab.fake.pushMessage(OWNER, "follow-up");
    await lab.fake.waitFor(() => shown(lab.fake).some((v) => v.startsWith("quick")), 5000, "the follow-up");
    expect([...c.providers.keys()]).toEqual([DM_KEY]);
    expect(c.providers.get(DM_KEY)?.prompts).toEqual(["long job", "follow-up"]);
  });
});
