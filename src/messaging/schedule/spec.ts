/**
 * The words of /every and /at: an interval ("90m", "1h30m", "2d") and a moment ("14:30",
 * "2025-06-01 09:00", "+45m"), read against an injected now and local-time offset. Pure.
 * Layer: messaging.
 */
import type { JobSchedule } from "../store/port.js";

const UNIT_MS: Readonly<Record<string, number>> = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 };
/** The shortest interval: every run is a whole agent turn, and a shorter one only burns the agent. */
export const MIN_INTERVAL_MS = 60_000;
/** The longest wait anyone means on purpose; past it a typo (a missing unit) is more likely. */
export const MAX_WAIT_MS = 366 * 86_400_000;

/** "1h30m" -> ms; null when it is not a duration. */
export function parseDuration(text: string): number | null {
  const m = /^(?:[0-9]{1,6}[smhd]){1,4}$/i.exec(text.trim());
  if (!m) return null;
  let total = 0;
  for (const part of text
    .trim()
    .toLowerCase()
    .matchAll(/([0-9]+)([smhd])/g))
    total += Number(part[1]) * (UNIT_MS[part[2] as string] as number);
  return total;
}

/** "1 h 30 m" style for listings: the largest units, at most two. */
export function formatDuration(ms: number): string {
  const parts: string[] = [];
  let rest = Math.round(ms / 1000);
  for (const [unit, size] of [
    ["d", 86_400],
    ["h", 3_600],
    ["m", 60],
    ["s", 1],
  ] as const) {
    if (rest >= size && parts.length < 2) {
      parts.push(`${Math.floor(rest / size)}${unit}`);
      rest %= size;
    }
  }
  return parts.join("") || "0s";
}

export interface ScheduleClock {
  now: number;
  /** Local time = UTC + this many minutes at the given instant. */
  utcOffsetMinutes: (epochMs: number) => number;
}

export type ParsedSchedule =
  | { ok: true; schedule: JobSchedule; firstRunMs: number; prompt: string }
  | { ok: false; error: string };

/** `/every <interval> <prompt>`. */
export function parseEvery(arg: string, clock: ScheduleClock): ParsedSchedule {
  const [head = "", ...rest] = arg.trim().split(/\s+/);
  const prompt = arg.trim().slice(head.length).trim();
  const everyMs = parseDuration(head);
  if (everyMs === null || rest.length === 0 || prompt === "")
    return { ok: false, error: "Give an interval and a prompt, e.g. `30m check the build`." };
  if (everyMs < MIN_INTERVAL_MS) return { ok: false, error: "The shortest interval is 1 minute." };
  if (everyMs > MAX_WAIT_MS) return { ok: false, error: "The longest interval is 366 days." };
  return { ok: true, schedule: { kind: "every", everyMs }, firstRunMs: clock.now + everyMs, prompt };
}

/** `/at <time> <prompt>`: HH:MM (the next one), YYYY-MM-DD HH:MM (or with T), or +<duration>. */
export function parseAt(arg: string, clock: ScheduleClock): ParsedSchedule {
  const words = arg.trim().split(/\s+/);
  const [first = "", second = ""] = words;
  let atMs: number | null = null;
  let used = 1;
  if (/^\+/.test(first) || first.toLowerCase() === "in") {
    const spec = first.toLowerCase() === "in" ? second : first.slice(1);
    if (first.toLowerCase() === "in") used = 2;
    const ms = parseDuration(spec);
    atMs = ms === null ? null : clock.now + ms;
  } else if (/^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{1,2}:[0-9]{2}$/.test(first)) {
    atMs = localDateTime(first.replace("T", " "), clock);
  } else if (/^[0-9]{4}-[0-9]{2}-[0-9]{2}$/.test(first) && /^[0-9]{1,2}:[0-9]{2}$/.test(second)) {
    atMs = localDateTime(`${first} ${second}`, clock);
    used = 2;
  } else if (/^[0-9]{1,2}:[0-9]{2}$/.test(first)) {
    atMs = nextClockTime(first, clock);
  }
  const prompt = words.slice(used).join(" ").trim();
  if (atMs === null || prompt === "")
    return {
      ok: false,
      error: "Give a time and a prompt, e.g. `14:30 summarize my inbox`, `2025-06-01 09:00 …` or `+45m …`.",
    };
  if (atMs <= clock.now) return { ok: false, error: "That time has already passed." };
  if (atMs - clock.now > MAX_WAIT_MS) return { ok: false, error: "That is more than 366 days away." };
  return { ok: true, schedule: { kind: "at", atMs }, firstRunMs: atMs, prompt };
}

/** "YYYY-MM-DD HH:MM" in local time; null for an impossible date or time. */
function localDateTime(text: string, clock: ScheduleClock): number | null {
  const m = /^([0-9]{4})-([0-9]{2})-([0-9]{2}) ([0-9]{1,2}):([0-9]{2})$/.exec(text);
  if (!m) return null;
  const [y, mo, d, h, mi] = m.slice(1).map(Number) as [number, number, number, number, number];
  if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59) return null;
  const asUtc = Date.UTC(y, mo - 1, d, h, mi);
  if (new Date(asUtc).getUTCDate() !== d) return null; // 31 February
  // The offset in force at that moment (a DST change between now and then is honoured).
  return asUtc - clock.utcOffsetMinutes(asUtc) * 60_000;
}

/** The next local HH:MM after now (today, else tomorrow). */
function nextClockTime(text: string, clock: ScheduleClock): number | null {
  const [h = 0, mi = 0] = text.split(":").map(Number);
  if (h > 23 || mi > 59) return null;
  const local = new Date(clock.now + clock.utcOffsetMinutes(clock.now) * 60_000);
  const today = Date.UTC(local.getUTCFullYear(), local.getUTCMonth(), local.getUTCDate(), h, mi);
  for (const candidate of [today, today + 86_400_000]) {
    const at = candidate - clock.utcOffsetMinutes(candidate) * 60_000;
    if (at > clock.now) return at;
  }
  return null;
}
