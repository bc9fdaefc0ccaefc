/** Shared setup for the store tests: a throwaway data home and a store opened in it. */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach } from "vitest";
import type { OpenStoreOptions } from "../../src/store/index.js";
import { openStore } from "../../src/store/index.js";
import type { SqlParleyStore } from "../../src/store/sql/store.js";

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

/** openStore, typed as the SQL store so a test can reach its repositories' concrete classes. */
export async function open(dir: string, options: OpenStoreOptions = {}): Promise<SqlParleyStore> {
  return (await openStore(dir, options)) as SqlParleyStore;
}
