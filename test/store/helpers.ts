/**
 * Shared setup for the store tests: a throwaway data home and a store opened in it. The same test
 * files run against both adapters: SQLite by default, PostgreSQL when a file calls
 * `usePostgresStores()` before importing them (test/store/postgres/contract.test.ts), where each
 * data home maps to its own fresh database on a throwaway server.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { TestAPI } from "vitest";
import { afterAll, afterEach, beforeAll, beforeEach, it } from "vitest";
import type { OpenStoreOptions } from "../../src/store/index.js";
import { openStore } from "../../src/store/index.js";
import type { SqlParleyStore } from "../../src/store/sql/store.js";
import type { TestPostgres } from "../helpers/postgres.js";
import { startTestPostgres } from "../helpers/postgres.js";

const backend: { postgres?: TestPostgres; starting?: Promise<TestPostgres>; urls: Map<string, string> } = {
  urls: new Map(),
};

/** Run this file's store tests against PostgreSQL (a throwaway server, or PARLEY_TEST_DATABASE_URL). */
export function usePostgresStores(): void {
  beforeAll(async () => {
    backend.starting = startTestPostgres();
    backend.postgres = await backend.starting;
  }, 60_000);
  afterAll(async () => {
    await backend.postgres?.stop();
  });
  backend.starting = new Promise(() => {});
}

export function onPostgres(): boolean {
  return backend.starting !== undefined;
}

/**
 * `it` for a test of the SQLite file itself (its bytes, pragmas, a row corrupted by hand): on the
 * PostgreSQL run it is not registered, since what it reads does not exist there.
 */
export const itOnSqliteFile: TestAPI = new Proxy(it, {
  apply(target, self, args) {
    if (onPostgres()) return undefined;
    return Reflect.apply(target, self, args);
  },
});

/** A fresh data home per test, removed afterwards; read `home.dir` inside a test. */
export function useTempHome(): { dir: string } {
  const home = { dir: "" };
  beforeEach(async () => {
    home.dir = await mkdtemp(join(tmpdir(), "parley-store-"));
  });
  afterEach(async () => {
    await rm(home.dir, { recursive: true, force: true });
  });
  return home;
}

async function databaseFor(dir: string): Promise<string> {
  const known = backend.urls.get(dir);
  if (known) return known;
  if (!backend.postgres) throw new Error("the test PostgreSQL is not running");
  const url = await backend.postgres.createDatabase();
  backend.urls.set(dir, url);
  return url;
}

/** openStore, typed as the SQL store so a test can reach its repositories' concrete classes. */
export async function open(dir: string, options: OpenStoreOptions = {}): Promise<SqlParleyStore> {
  const url = onPostgres() ? { url: await databaseFor(dir) } : {};
  return (await openStore(dir, { ...options, ...url })) as SqlParleyStore;
}
