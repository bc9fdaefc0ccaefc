/**
 * The chaos run in the suite (30 kills; `npm run chaos` runs 200 and prints the counts): the real
 * gateway, killed with SIGKILL at seeded random points over a scripted conversation on the web chat
 * and the Telegram fake, answers every accepted message exactly once and posts no part twice.
 */
import { describe, expect, it } from "vitest";
import { runChaos } from "./run.js";

const SEED = Number(process.env.PARLEY_CHAOS_SEED ?? "16016");

describe("chaos", () => {
  it(`30 SIGKILL restarts (seed ${SEED}): nothing lost, nothing answered twice, no part posted twice`, async () => {
    const r = await runChaos({ kills: 30, seed: SEED });
    expect(r.sent.webchat + r.sent.telegram).toBeGreaterThan(30);
    expect(r.lost).toEqual([]);
    expect(r.duplicated).toEqual([]);
    // No notice tells a sender an answered message was not run; the history holds each answer once.
    expect(r.wrongNotices).toEqual([]);
    expect(r.history).toEqual({ missing: [], doubled: [] });
    expect(r.orphans.webchat).toEqual([]);
    // Telegram's one window no ledger settles (no idempotency key, no lookup): each part it made
    // the gateway create twice was audited as such.
    expect(r.orphans.telegram.length).toBeLessThanOrEqual(r.ambiguousResends);
    expect(r.unfinished).toBe(0);
  }, 240_000);
});
