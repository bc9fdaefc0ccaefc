/**
 * Restarts with the real store: an activity is journaled before the Connector hears 200, so a
 * crash costs no message; a turn cut short is answered after the restart in the messages its first
 * run posted (no duplicate); an activity the Connector delivers again after a restart runs once.
 * A "crash" closes the endpoint and abandons the hub: nothing is settled, exactly as a kill.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import { FakeTeams } from "../fakes/teams/server.js";
import { permissionRequest } from "../helpers/events.js";
import type { Stack } from "./helpers.js";
import { cardTexts, done, seen, startStack, text, visible } from "./helpers.js";

let fake: FakeTeams | undefined;
const stacks: Stack[] = [];
afterEach(async () => {
  for (const s of stacks.splice(0)) await s.close();
  await fake?.close();
  fake = undefined;
});

async function crash(s: Stack): Promise<void> {
  await s.running.endpoint.close();
}

describe("teams: restart", () => {
  it("a turn cut short by a crash is answered after the restart, in the message it had posted", async () => {
    fake = await new FakeTeams().start();
    const a = await startStack({
      fake,
      turns: [{ steps: [text("working on it…"), permissionRequest({ title: "slow tool" })] }],
    });
    stacks.push(a);
    const conversation = fake.personalConversation(a.alice);
    await a.driver.post(a.driver.message(a.alice, "do the slow thing"));
    await vi.waitFor(() =>
      expect(fake?.shown(conversation).some((m) => cardTexts(m).text.includes("slow tool"))).toBe(true),
    );
    expect(await a.parley.intake.countUnfinished()).toBe(1);
    const before = fake.shown(conversation).length;
    await crash(a);

    const b = await startStack({ fake, home: a.home, turns: [[text("answer to the slow thing"), done]] });
    stacks.push(b);
    await seen(fake, "answer to the slow thing", conversation);
    await vi.waitFor(async () => expect(await b.parley.intake.countUnfinished()).toBe(0));
    // The answer replaced what the first run had posted as its first part: no new message for it.
    const shown = fake.shown(conversation);
    expect(shown).toHaveLength(before);
    expect(visible(fake, conversation).filter((v) => v.includes("working on it"))).toEqual([]);
    expect(visible(fake, conversation).filter((v) => v.includes("answer to the slow thing"))).toHaveLength(1);
  });

  it("an activity the Connector delivers again after a restart is acknowledged and runs once", async () => {
    fake = await new FakeTeams().start();
    const a = await startStack({ fake, turns: [[text("the one answer"), done]] });
    stacks.push(a);
    const conversation = fake.personalConversation(a.alice);
    const activity = a.driver.message(a.alice, "hello");
    expect((await a.driver.post(activity)).status).toBe(200);
    await seen(fake, "the one answer", conversation);
    await vi.waitFor(async () => expect(await a.parley.intake.countUnfinished()).toBe(0));
    await a.stop();

    const b = await startStack({ fake, home: a.home, turns: [[text("answered AGAIN"), done]] });
    stacks.push(b);
    expect((await b.driver.post(activity)).status).toBe(200);
    expect(b.audit.find("intake", "dropped").map((r) => r.fields.reason)).toEqual(["redelivered"]);
    expect(b.startedKeys).toEqual([]);
    expect(visible(fake, conversation).filter((v) => v.includes("AGAIN"))).toEqual([]);
  });

  it("stopping settles the running turn before the endpoint closes; a late activity gets 503 to be sent again", async () => {
    fake = await new FakeTeams().start();
    const a = await startStack({
      fake,
      turns: [{ steps: [text("partial"), permissionRequest({ title: "waits" })] }],
    });
    stacks.push(a);
    await a.driver.post(a.driver.message(a.alice, "go"));
    await seen(fake, "waits");
    const stopping = a.stop();
    const late = await a.driver
      .post(a.driver.message(a.alice, "too late"))
      .catch(() => ({ status: 0, body: "" }));
    expect([503, 0]).toContain(late.status);
    await stopping;
    // The turn was cancelled and awaited (its prompt denied), and the message stays for the next start.
    expect(a.provider.hasActiveTurn()).toBe(false);
    expect(await a.parley.intake.countUnfinished()).toBe(1);
  });
});
