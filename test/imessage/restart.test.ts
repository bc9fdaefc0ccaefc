/**
 * Kill and restart against the fake, with the real store: a turn cut short is answered after the
 * restart (what its first run landed and still says the same is not sent again), rows that arrived
 * while parley was down are answered once from the durable cursor, a row already journaled is never
 * answered twice, and a typed 1 after the restart approves nothing (the prompt died with the run).
 * "Killed" here: the first process's watch and imsg child stop without its turns settling.
 */
import { describe, expect, it } from "vitest";
import { waitFor } from "../fakes/imsg/control.js";
import { permissionRequest } from "../helpers/events.js";
import { caughtUp, done, imsgLab, OWNER, promptsOf, startChannel, text } from "./channel-harness.js";

const lab = imsgLab();

describe("kill and restart", () => {
  it("missed rows answered once, the cut turn answered, nothing twice, and a typed 1 approves nothing", async () => {
    const folder = lab.folder();
    const a = await lab.channel({
      turns: () => [
        { steps: [text("working on it…"), permissionRequest({ requestId: "r1", title: "slow tool" })] },
      ],
    });
    await folder.incoming(OWNER, "do the thing");
    await waitFor(
      () => folder.sent(OWNER).some((t) => t.includes("Permission needed: slow tool")),
      "the prompt",
    );
    await caughtUp(a, folder);
    expect(await a.parley.intake.countUnfinished()).toBe(1);
    const firstRun = folder.sent(OWNER);
    expect(firstRun).toEqual(["working on it…", expect.stringContaining("Reply 1 to approve or 2 to deny")]);
    // The kill: intake and the child gone, the turn never settled.
    a.running.feed.stop();
    await a.running.client.stop();
    folder.appendRow(OWNER, "sent while you were down");

    const b = await startChannel(folder, {
      home: a.home,
      turns: () => [
        [text("the real answer"), done],
        [text("caught up"), done],
        [text("one what?"), done],
      ],
    });
    try {
      await waitFor(
        () => folder.sent(OWNER).some((t) => t.startsWith("the real answer")),
        "the resumed answer",
      );
      await waitFor(
        () => folder.sent(OWNER).some((t) => t.startsWith("caught up")),
        "the missed row answered",
      );
      await caughtUp(b, folder);
      await folder.incoming(OWNER, "1");
      await waitFor(() => folder.sent(OWNER).some((t) => t.startsWith("one what?")), "the 1 as a message");
      await waitFor(async () => (await b.parley.intake.countUnfinished()) === 0, "every message done");
      const sent = folder.sent(OWNER);
      // The cut turn answered once (its first part said something else, so it went out anew).
      expect(sent.filter((t) => t.startsWith("the real answer"))).toHaveLength(1);
      expect(sent.filter((t) => t.startsWith("caught up"))).toHaveLength(1);
      expect(sent.filter((t) => t.includes("Permission needed"))).toHaveLength(1);
      const prompts = promptsOf(b);
      expect(prompts.filter((p) => p.includes("do the thing"))).toHaveLength(1);
      expect(prompts.filter((p) => p.includes("sent while you were down"))).toHaveLength(1);
      // The 1 reached the agent as words; no provider of either run was told "approve".
      expect(prompts).toContain("1");
      expect([...a.providers.values(), ...b.providers.values()].flatMap((p) => p.answers)).toEqual([]);
    } finally {
      await b.stop();
    }
  });
});
