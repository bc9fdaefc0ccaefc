/** The vitest hooks around test/helpers/postgres.ts (kept apart: the benches import that one). */
import { afterAll, beforeAll } from "vitest";
import type { TestPostgres } from "./postgres.js";
import { startTestPostgres } from "./postgres.js";

/** One throwaway server for this test file: started before its tests, stopped after them. */
export function useTestPostgres(): { server: TestPostgres } {
  const holder = {} as { server: TestPostgres };
  beforeAll(async () => {
    holder.server = await startTestPostgres();
  }, 60_000);
  afterAll(async () => {
    await holder.server?.stop();
  });
  return holder;
}
