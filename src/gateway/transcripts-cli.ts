/**
 * `parley transcripts purge`: delete conversation history from the store, by session, by age, or
 * all of it (the words are overwritten, not merely unlinked: see docs/store.md). It takes the data
 * home's lock like a start does, so it refuses while a gateway runs there: a purge is a deliberate
 * act, done on a quiet store, and nothing else then holds old page images in the WAL.
 */
import { ParleyError } from "../messaging/base/errors.js";
import type { TranscriptPurge } from "../messaging/store/port.js";
import { openStore } from "../store/index.js";
import { acquireHomeLock } from "./home-lock.js";

export interface PurgeOptions {
  session?: string | undefined;
  before?: string | undefined;
  all?: boolean | undefined;
}

/** Exactly one scope, spelled out: a purge of everything must be asked for as such. */
export function purgeScope(o: PurgeOptions): TranscriptPurge {
  const given = [o.session !== undefined, o.before !== undefined, o.all === true].filter(Boolean).length;
  if (given !== 1)
    throw new ParleyError(
      "CONFIG_INVALID",
      "say what to purge: exactly one of --session KEY, --before DATE or --all",
    );
  if (o.all) return { scope: "all" };
  if (o.session !== undefined) {
    if (o.session.trim() === "") throw new ParleyError("CONFIG_INVALID", "--session needs a session key");
    return { scope: "session", sessionKey: o.session.trim() };
  }
  // An ISO date (2024-05-01) or date-time; anything Date cannot read exactly is refused.
  const text = (o.before ?? "").trim();
  const at = /^\d{4}-\d{2}-\d{2}([T ][\d:.]+(Z|[+-]\d{2}:?\d{2})?)?$/.test(text)
    ? Date.parse(text)
    : Number.NaN;
  if (!Number.isFinite(at))
    throw new ParleyError("CONFIG_INVALID", `--before needs a date like 2024-05-01, got "${o.before}"`);
  return { scope: "before", beforeMs: at };
}

/** Run the purge on the store of `home`; resolves to how many lines went. */
export async function purgeTranscripts(home: string, what: TranscriptPurge): Promise<number> {
  const lock = await acquireHomeLock(home);
  try {
    const store = await openStore(home);
    try {
      return await store.transcripts.purge(what);
    } finally {
      await store.close();
    }
  } finally {
    await lock.release();
  }
}
