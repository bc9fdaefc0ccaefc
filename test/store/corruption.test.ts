/**
 * A damaged database is reported with the file and a repair hint, and never reset: the file is left
 * byte-for-byte as it was, so nothing a repair could still recover is destroyed.
 */
import { createHash } from "node:crypto";
import { existsSync, statSync } from "node:fs";
import { open as openFile, readFile, truncate, writeFile } from "node:fs/promises";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { StoreCorruptError, StoreTooNewError } from "../../src/messaging/store/errors.js";
import { storePath } from "../../src/store/index.js";
import { LATEST_SCHEMA_VERSION, MIGRATION_TABLE } from "../../src/store/sql/migrations.js";
import { open, useTempHome } from "./helpers.js";

const home = useTempHome();

async function digest(path: string): Promise<string> {
  return createHash("sha256")
    .update(await readFile(path))
    .digest("hex");
}

/** A closed store with enough rows to span many pages. */
async function populated(dir: string): Promise<string> {
  const store = await open(dir);
  for (let i = 0; i < 400; i++) {
    await store.transcripts.append({
      sessionKey: `s${i % 7}`,
      atMs: i,
      entry: { kind: "agent", text: `line ${i} `.repeat(20) },
    });
  }
  store.sessions.setTitle("webchat:a", "kept", "manual");
  await store.close();
  return storePath(dir);
}

async function expectRefusedUntouched(path: string, problem: RegExp): Promise<void> {
  const before = await digest(path);
  const error = await open(home.dir).catch((e: unknown) => e);
  expect(error).toBeInstanceOf(StoreCorruptError);
  const message = (error as Error).message;
  expect(message).toContain(path);
  expect(message).toMatch(problem);
  expect(message).toMatch(/Nothing was reset/);
  expect(message).toMatch(/\.recover/);
  expect(await digest(path)).toBe(before);
}

describe("a corrupt database", () => {
  it("a file that is not a database at all", async () => {
    const path = storePath(home.dir);
    await writeFile(path, Buffer.from("this is a text file someone saved over the database\n".repeat(200)));
    await expectRefusedUntouched(path, /not a readable database/);
  });

  /** Pseudo-random garbage over `pages` pages from page index `first`: the kind of damage a bad disk does. */
  async function scribble(path: string, first: number, pages: number): Promise<void> {
    let s = 7;
    const junk = Buffer.alloc(4096 * pages, 0).map(() => {
      s = (s * 1103515245 + 12345) & 0x7fffffff;
      return s & 0xff;
    });
    const fh = await openFile(path, "r+");
    await fh.write(junk, 0, junk.length, 4096 * first);
    await fh.close();
  }

  it("pages overwritten near the start of a real database (the header still reads)", async () => {
    const path = await populated(home.dir);
    await scribble(path, 2, 4);
    await expectRefusedUntouched(path, /not a readable database \(database disk image is malformed\)/);
  });

  it("a damaged free-page list, which only the integrity check at open reaches", async () => {
    const path = await populated(home.dir);
    const bytes = await readFile(path);
    // Header bytes 32-39: first free-list trunk page and free page count; point past the file's end.
    bytes.writeUInt32BE(bytes.length / 4096 + 50, 32);
    bytes.writeUInt32BE(3, 36);
    await writeFile(path, bytes);
    await expectRefusedUntouched(path, /fails its integrity check \(.*Freelist: invalid page number/s);
  });

  it("a database cut short (a copy interrupted half-way)", async () => {
    const path = await populated(home.dir);
    await truncate(path, Math.floor(statSync(path).size / 2 / 4096) * 4096);
    await expectRefusedUntouched(path, /integrity check|not a readable database/);
  });
});

describe("schema versions", () => {
  it("a new store is created owner-only at the latest schema version; reopening migrates nothing", async () => {
    const store = await open(home.dir);
    const health = await store.health();
    expect(health).toMatchObject({
      schemaVersion: LATEST_SCHEMA_VERSION,
      integrity: { ok: true },
      unfinishedIntake: 0,
    });
    expect(health.location).toBe(storePath(home.dir));
    expect(health.sizeBytes).toBeGreaterThan(0);
    expect(statSync(storePath(home.dir)).mode & 0o777).toBe(0o600);
    expect(statSync(`${storePath(home.dir)}-wal`).mode & 0o777).toBe(0o600);
    await store.close();
    const again = await open(home.dir);
    expect((await again.health()).schemaVersion).toBe(LATEST_SCHEMA_VERSION);
    await again.close();
    expect(existsSync(storePath(home.dir))).toBe(true);
  });

  it("a database migrated by a newer parley is refused by name, not written to", async () => {
    const store = await open(home.dir);
    await store.close();
    const raw = new Database(storePath(home.dir));
    raw
      .prepare(`insert into ${MIGRATION_TABLE} (name, timestamp) values (?, ?)`)
      .run("0099_from_the_future", "2030-01-01");
    raw.close();
    const error = await open(home.dir).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StoreTooNewError);
    expect((error as Error).message).toContain("0099_from_the_future");
    expect((error as Error).message).toContain(storePath(home.dir));
  });
});
