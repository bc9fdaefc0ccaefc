/**
 * Upgrading an install that kept its state in JSON files: the files (fixtures/legacy-install) were
 * written by the real legacy classes before they were retired, not by hand; the store imports them
 * once and renames them, and what a user had is still there.
 */
import { existsSync } from "node:fs";
import { cp, mkdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { decodeStore, SESSION_STORE_FILE } from "../../src/messaging/session/legacy-session-file.js";
import { StoreCorruptError } from "../../src/messaging/store/errors.js";
import { TELEGRAM_CURSOR } from "../../src/store/index.js";
import { TELEGRAM_CURSOR as POLLED_CURSOR } from "../../src/telegram/poller.js";
import { open, useTempHome } from "./helpers.js";

const home = useTempHome();
const alice = "telegram:agent:direct:111";
const web = "webchat:default:direct:aaa111";
const TRUST_DISCORD = "trust/discord_resume_expectations.json";
const TRUST_TELEGRAM = "trust/telegram_resume_expectations.json";
const CURSOR = "routing/telegram_offset.json";

/** An older install: sessions, a Discord resume record, the Telegram cursor (offset 43). */
async function writeOldInstall(dir: string): Promise<void> {
  await cp(new URL("./fixtures/legacy-install/", import.meta.url), dir, { recursive: true });
}

describe("importing an older install's JSON state", () => {
  it("keeps sessions, resume records and the Telegram cursor, and renames the files instead of deleting them", async () => {
    await writeOldInstall(home.dir);
    const sessionsText = await readFile(join(home.dir, SESSION_STORE_FILE), "utf8");
    const before = decodeStore(sessionsText);

    const imports: unknown[] = [];
    const store = await open(home.dir, { onImport: (r) => imports.push(r) });
    expect(store.sessions.keys().map((k) => store.sessions.get(k))).toEqual(before);
    // The channel polls under the name the import writes.
    expect(POLLED_CURSOR).toBe(TELEGRAM_CURSOR);
    expect(store.sessions.flag(alice, "private")).toBe(true);
    expect(store.sessions.titleOf(web)).toEqual({ title: "Plan the trip", kind: "manual" });
    const discord = store.resume.forChannel("discord");
    await discord.ready();
    expect(Object.fromEntries(discord.entries())).toEqual({
      dm1: { key: web, title: "Plan the trip", version: 1, retired: false },
      dm9: { key: web, title: "Old", version: 2, retired: true },
    });
    expect(await store.cursors.get(TELEGRAM_CURSOR)).toBe(43);
    expect(imports).toEqual([
      expect.objectContaining({
        sessions: 2,
        telegramCursor: 43,
        renamed: [`${SESSION_STORE_FILE}.imported`, `${TRUST_DISCORD}.imported`, `${CURSOR}.imported`],
      }),
    ]);
    for (const rel of [SESSION_STORE_FILE, TRUST_DISCORD, CURSOR]) {
      expect(existsSync(join(home.dir, rel)), rel).toBe(false);
      expect(existsSync(join(home.dir, `${rel}.imported`)), rel).toBe(true);
    }
    expect(await readFile(join(home.dir, `${SESSION_STORE_FILE}.imported`), "utf8")).toBe(sessionsText);
    await store.close();

    // Once is once: the next start finds nothing to import and keeps what the store holds.
    const again = await open(home.dir, { onImport: (r) => imports.push(r) });
    expect(again.sessions.keys()).toHaveLength(2);
    expect(imports).toHaveLength(1);
    await again.close();
  });

  it("an unreadable sessions.json refuses the start with a repair hint; nothing is imported or renamed", async () => {
    await writeOldInstall(home.dir);
    await writeFile(
      join(home.dir, SESSION_STORE_FILE),
      '{"version": 1, "sessions": {"k": {"generation": -1}}}',
    );
    const error = await open(home.dir).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StoreCorruptError);
    expect((error as Error).message).toContain(join(home.dir, SESSION_STORE_FILE));
    expect((error as Error).message).toMatch(/generation is not a non-negative integer/);
    expect((error as Error).message).toMatch(/move it aside/);
    for (const rel of [SESSION_STORE_FILE, TRUST_DISCORD, CURSOR])
      expect(existsSync(join(home.dir, rel)), rel).toBe(true);
    // Once repaired (here: moved aside), the start goes through and imports the rest.
    await writeFile(join(home.dir, SESSION_STORE_FILE), '{"version": 1, "sessions": {}}');
    const store = await open(home.dir);
    await store.resume.forChannel("discord").ready();
    expect(store.resume.forChannel("discord").entries()).toHaveLength(2);
    await store.close();
  });

  it("an unreadable resume file leaves only its channel refusing, stays in place, and is imported once repaired", async () => {
    await writeOldInstall(home.dir);
    await mkdir(join(home.dir, "trust"), { recursive: true });
    const broken = '{"dm3": {"key": "webchat:x", "title": "secret title", "version": "one"}}';
    await writeFile(join(home.dir, TRUST_TELEGRAM), broken);
    const store = await open(home.dir);
    const telegram = store.resume.forChannel("telegram");
    const status = await telegram.ready();
    expect(status.state).toBe("unreadable");
    expect(status.state === "unreadable" && status.problem).toContain(TRUST_TELEGRAM);
    expect(status.state === "unreadable" && status.problem).not.toContain("secret title");
    expect(telegram.repairHint()).toMatch(/imported into the store at the next start/);
    expect(await telegram.record("dm3", { key: "webchat:x", title: "t" })).toMatchObject({
      ok: false,
      reason: "unreadable",
    });
    expect(await readFile(join(home.dir, TRUST_TELEGRAM), "utf8")).toBe(broken);
    expect((await store.resume.forChannel("discord").ready()).state).toBe("ready");
    await store.close();

    await writeFile(
      join(home.dir, TRUST_TELEGRAM),
      '{"dm3": {"key": "webchat:x", "title": "t", "version": 4}}',
    );
    const repaired = await open(home.dir);
    const again = repaired.resume.forChannel("telegram");
    expect((await again.ready()).state).toBe("ready");
    expect(again.get("dm3")).toEqual({ key: "webchat:x", title: "t", version: 4, retired: false });
    expect(existsSync(join(home.dir, `${TRUST_TELEGRAM}.imported`))).toBe(true);
    await repaired.close();
  });

  it("never overwrites an earlier .imported copy, and an unusable cursor imports as no cursor", async () => {
    await mkdir(join(home.dir, "routing"), { recursive: true });
    await writeFile(join(home.dir, `${CURSOR}.imported`), "the first import");
    await writeFile(join(home.dir, CURSOR), '{"offset": "garbage"}');
    const store = await open(home.dir, { now: () => 1234 });
    expect(await store.cursors.get(TELEGRAM_CURSOR)).toBeUndefined();
    expect(await readFile(join(home.dir, `${CURSOR}.imported`), "utf8")).toBe("the first import");
    expect(await readFile(join(home.dir, `${CURSOR}.imported-1234`), "utf8")).toBe('{"offset": "garbage"}');
    await store.close();
  });
});
