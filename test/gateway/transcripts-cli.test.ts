/**
 * `parley transcripts purge`: one scope, spelled out; the words go from the store; and not while a
 * gateway holds the data home.
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { CliIo } from "../../src/gateway/cli.js";
import { runCli } from "../../src/gateway/cli.js";
import { openStore } from "../../src/store/index.js";

const A = "webchat:default:direct:aaa";
const B = "telegram:default:direct:42";
const DAY = 24 * 60 * 60 * 1000;

async function seeded(): Promise<string> {
  const home = mkdtempSync(join(tmpdir(), "parley-purge-"));
  const store = await openStore(home);
  const old = Date.parse("2024-01-10T12:00:00Z");
  await store.transcripts.append({
    sessionKey: A,
    atMs: old,
    entry: { kind: "user", text: "an old secret", attachments: [] },
  });
  await store.transcripts.append({
    sessionKey: A,
    atMs: old + 40 * DAY,
    entry: { kind: "agent", text: "newer" },
  });
  await store.transcripts.append({
    sessionKey: B,
    atMs: old + 40 * DAY,
    entry: { kind: "agent", text: "other" },
  });
  await store.close();
  return home;
}

async function purge(home: string, ...args: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const io: CliIo = {
    out: (l) => out.push(l),
    err: (l) => err.push(l),
    env: { PARLEY_HOME: home },
    cwd: home,
    stopSignal: () => new Promise(() => {}),
  };
  const code = await runCli(["transcripts", "purge", ...args], io);
  return { code, out: out.join("\n"), err: err.join("\n") };
}

async function texts(home: string): Promise<string[]> {
  const store = await openStore(home);
  try {
    const lines = [...(await store.transcripts.recent(A, 50)), ...(await store.transcripts.recent(B, 50))];
    return lines.map((l) =>
      l.entry.kind === "tool" || l.entry.kind === "approval" ? l.entry.title : l.entry.text,
    );
  } finally {
    await store.close();
  }
}

describe("parley transcripts purge", () => {
  it("needs exactly one scope, and a date it can read", async () => {
    const home = await seeded();
    for (const args of [[], ["--all", "--session", A], ["--before", "last tuesday"], ["--session", " "]]) {
      const r = await purge(home, ...args);
      expect(r.code, args.join(" ")).toBe(2);
    }
    expect((await purge(home, "--before", "yesterday")).err).toContain(
      "--before needs a date like 2024-05-01",
    );
    expect(await texts(home)).toHaveLength(3);
  });

  it("purges lines older than a date, one session, or everything", async () => {
    const home = await seeded();
    expect(await purge(home, "--before", "2024-02-01")).toMatchObject({
      code: 0,
      out: "purged 1 transcript line",
    });
    expect(await texts(home)).toEqual(["newer", "other"]);
    expect(await purge(home, "--session", A)).toMatchObject({ code: 0, out: "purged 1 transcript line" });
    expect(await texts(home)).toEqual(["other"]);
    expect(await purge(home, "--all")).toMatchObject({ code: 0, out: "purged 1 transcript line" });
    expect(await texts(home)).toEqual([]);
  });

  it("refuses while a gateway holds the data home", async () => {
    const home = await seeded();
    // A live process (this test's parent) holds the lock.
    writeFileSync(join(home, "parley.lock"), `${process.ppid}\n`);
    const r = await purge(home, "--all");
    expect(r.code).toBe(1);
    expect(r.err).toContain(`another parley (pid ${process.ppid}) is already using`);
    expect(await texts(home)).toHaveLength(3);
  });
});
