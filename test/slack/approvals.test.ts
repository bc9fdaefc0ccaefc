/**
 * Block Kit approvals through the hub's press path: the action_id carries the request id and the
 * per-prompt nonce; a forged or pre-restart nonce approves nothing (fails closed, and says so to
 * the presser alone); a fresh press runs the tool and the prompt shows its outcome; the typed 1/2
 * floor works beside the buttons; "Approve + auto-approve" arms the one grant, for the owner in a
 * DM only.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { FakeSlack } from "../fakes/slack/server.js";
import { permissionRequest } from "../helpers/events.js";
import type { Stack } from "./helpers.js";
import {
  ALICE,
  BOB,
  BOB_DM,
  buttonIds,
  DM,
  done,
  shown,
  startStack,
  text,
  until,
  untilFooter,
} from "./helpers.js";

const stacks: Stack[] = [];
let fake: FakeSlack | undefined;
afterEach(async () => {
  for (const s of stacks.splice(0)) await s.close();
  await fake?.close();
  fake = undefined;
});

const guarded = (title: string) => ({
  steps: [permissionRequest({ requestId: "r1", title, kind: "execute" })],
  onPermission: { approve: [text("Tool ran."), done], deny: [text("Tool skipped."), done] },
});

async function prompt(s: Stack, channel = DM): Promise<{ ts: string; ids: string[] }> {
  let found: { ts: string; ids: string[] } | undefined;
  await until(() => {
    const m = s.fake.botMessages(channel).find((x) => buttonIds(x).some((id) => id.startsWith("parley:a:")));
    found = m ? { ts: m.ts, ids: buttonIds(m) } : undefined;
    return found !== undefined;
  }, "the prompt");
  return found as { ts: string; ids: string[] };
}

describe("slack approvals", () => {
  it("a forged nonce approves nothing; a fresh press runs the tool and the prompt shows it", async () => {
    const s = await startStack({ turns: [guarded("deploy --prod")] });
    stacks.push(s);
    const { ts: thread } = s.fake.userMessage({ channel: DM, user: ALICE, text: "deploy" });
    const p = await prompt(s);
    expect(p.ids.map((id) => id.replace(/:[A-Za-z0-9_-]{22}:/, ":<nonce>:"))).toEqual([
      "parley:a:r1:<nonce>:1",
      "parley:a:r1:<nonce>:0",
      // Alice owns the bot and this is her DM: the one grant is offered beside Approve and Deny.
      "parley:a:r1:<nonce>:g",
    ]);
    const forged = (p.ids[0] as string).replace(/:[A-Za-z0-9_-]{22}:/, `:${"A".repeat(22)}:`);
    await s.fake.delivery.acked(s.fake.press({ ts: p.ts, actionId: forged, user: ALICE }));
    await until(
      () => s.fake.thread(DM, thread, ALICE).some((m) => m.ephemeralFor === ALICE),
      "the expiry notice",
    );
    expect(s.provider.answers).toEqual([]);
    s.fake.press({ ts: p.ts, actionId: p.ids[0] as string, user: ALICE });
    await untilFooter(s.fake, DM);
    expect(s.provider.answers).toEqual([{ requestId: "r1", verdict: "approve" }]);
    const seen = shown(s.fake, DM, thread).join("\n");
    expect(seen).toMatch(/deploy --prod[\s\S]*Approved \(this once\)/);
    expect(seen).toContain("Tool ran.");
    // A decided prompt never looks live: its buttons are gone.
    expect(buttonIds(s.fake.botMessages(DM).find((m) => m.ts === p.ts))).toEqual([]);
  });

  it("a button from before a restart approves nothing, though its request id is live again", async () => {
    fake = await new FakeSlack().start();
    const home = mkdtempSync(join(tmpdir(), "parley-slack-restart-"));
    const first = await startStack({ fake, home, turns: [guarded("rm -rf build")] });
    stacks.push(first);
    fake.userMessage({ channel: DM, user: ALICE, text: "clean" });
    const old = await prompt(first);
    await first.close();
    stacks.splice(0);
    const second = await startStack({ fake, home, turns: [guarded("rm -rf build")], provider: {} });
    stacks.push(second);
    // The restart answers the unfinished message again: the prompt, again request r1, is put on
    // the message the first run posted (no second prompt), with a new nonce.
    const onScreen = () => fake?.botMessages(DM).find((m) => m.ts === old.ts);
    await until(
      () => buttonIds(onScreen())[0] !== old.ids[0] && buttonIds(onScreen()).length > 0,
      "the new nonce",
    );
    expect(fake.botMessages(DM).filter((m) => buttonIds(m).length > 0)).toHaveLength(1);
    await second.fake.delivery.acked(
      second.fake.press({ ts: old.ts, actionId: old.ids[0] as string, user: ALICE }),
    );
    await until(() => second.fake.messages.some((m) => m.ephemeralFor === ALICE), "the expiry notice");
    expect(second.provider.answers).toEqual([]);
    second.fake.press({ ts: old.ts, actionId: buttonIds(onScreen())[1] as string, user: ALICE });
    await until(() => second.provider.answers.length === 1, "the fresh press");
    expect(second.provider.answers).toEqual([{ requestId: "r1", verdict: "deny" }]);
  });

  it("a typed 1 answers the prompt beside its buttons", async () => {
    const s = await startStack({ turns: [guarded("npm test")] });
    stacks.push(s);
    const { ts: thread } = s.fake.userMessage({ channel: DM, user: ALICE, text: "test" });
    await prompt(s);
    s.fake.userMessage({ channel: DM, user: ALICE, text: "1", threadTs: thread });
    await untilFooter(s.fake, DM);
    expect(s.provider.answers).toEqual([{ requestId: "r1", verdict: "approve" }]);
    expect(shown(s.fake, DM, thread).join("\n")).toMatch(/npm test[\s\S]*Approved \(this once\)/);
  });

  it("Approve + auto-approve arms the one grant for the owner in a DM, and nobody else", async () => {
    const s = await startStack({ turns: [guarded("make release"), guarded("make release")] });
    stacks.push(s);
    // Bob is allowed but not the owner: no grant button for him, and a forged one is refused.
    s.fake.userMessage({ channel: BOB_DM, user: BOB, text: "release" });
    const bobs = await prompt(s, BOB_DM);
    expect(bobs.ids.some((id) => id.endsWith(":g"))).toBe(false);
    const forged = (bobs.ids[0] as string).replace(/:1$/, ":g");
    await s.fake.delivery.acked(s.fake.press({ ts: bobs.ts, actionId: forged, user: BOB }));
    await until(() => s.audit.find("auto_approve", "refused").length === 1, "the refusal");
    expect(s.provider.answers).toEqual([]);
    s.fake.press({ ts: bobs.ts, actionId: bobs.ids[1] as string, user: BOB });
    await untilFooter(s.fake, BOB_DM);
    const { ts: thread } = s.fake.userMessage({ channel: DM, user: ALICE, text: "release" });
    const alices = await prompt(s);
    s.fake.press({ ts: alices.ts, actionId: alices.ids[2] as string, user: ALICE });
    await untilFooter(s.fake, DM);
    expect(s.provider.answers.at(-1)).toEqual({ requestId: "r1", verdict: "approve" });
    expect(s.audit.find("auto_approve", "granted")[0]?.fields).toMatchObject({
      source: "slack",
      caller: ALICE,
    });
    expect(shown(s.fake, DM, thread).join("\n")).toContain("Auto-approve is ON");
  });
});
