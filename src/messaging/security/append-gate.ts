/**
 * What a surface that streams by APPENDING may show now. Appended text is final: the platform joins
 * every append into one rendered run of characters and nothing shown can be edited back. So two
 * appends that are each clean can still spell a key once rendered together (`AKIA**IOSF` then
 * `ODNN7EXAMPLE**`), and a key whose first half already went out can no longer be redacted.
 *
 * The gate therefore judges every candidate on the RENDERED CONCATENATION of what was shown plus the
 * candidate, and appends only what redaction can no longer change:
 * - the look-behind: an unfinished line is held (a link bracket, an entity, an escape, a delimiter
 *   run or a format character on it can still change how what precedes it reads; none of that
 *   crosses a line break, and no reading removes one). A caller that knows the line ended says so.
 * - redaction of the concatenation must leave what was already shown untouched;
 * - under every reading a reader can see (display-safety.ts), the redaction planner with more text
 *   still to come must hold nothing back: a PEM block still open, a key/value rule waiting for its
 *   value, a URL still being written all stay unshown until they are decided.
 * Anything else waits for the next offer, or for `finish`. Layer: messaging (security).
 */
import { displayReadings, redactForDisplay } from "./display-safety.js";
import { StreamRedactor } from "./stream-redactor.js";

export interface AppendStep {
  /** Display-safe text to append now ("" = nothing yet). */
  append: string;
  /** How many UTF-16 units of the offered source text it covers. */
  consumed: number;
}

export class FinalAppendGate {
  #shown = "";

  /** Everything appended so far, as the platform shows it joined. */
  get shown(): string {
    return this.#shown;
  }

  /**
   * Offer `pending`, the source text that follows what earlier steps consumed. `lineComplete`: the
   * source text goes on with a line break right after `pending`, so its last line is final too.
   */
  next(pending: string, opts: { lineComplete?: boolean } = {}): AppendStep {
    const end = opts.lineComplete ? pending.length : pending.lastIndexOf("\n") + 1;
    // Candidates are line ends, latest first: a settled line is the unit nothing later can rejoin.
    for (let cut = end; cut > 0; cut = pending.lastIndexOf("\n", cut - 2) + 1) {
      const safe = redactForDisplay(this.#shown + pending.slice(0, cut)).text;
      if (!safe.startsWith(this.#shown)) continue;
      const probe = safe.endsWith("\n") ? safe : `${safe}\n`;
      if (!settledUnderEveryReading(probe)) continue;
      const append = safe.slice(this.#shown.length);
      this.#shown = safe;
      return { append, consumed: cut };
    }
    return { append: "", consumed: 0 };
  }

  /**
   * The stream ends with `pending`: all of it goes, redacted against the whole. `breach` reports the
   * case the gate exists to prevent (redaction reaching into text already shown); the rest is then
   * redacted alone, and the caller should report it.
   */
  finish(pending: string): AppendStep & { breach: boolean } {
    const whole = redactForDisplay(this.#shown + pending).text;
    if (whole.startsWith(this.#shown)) {
      const append = whole.slice(this.#shown.length);
      this.#shown = whole;
      return { append, consumed: pending.length, breach: false };
    }
    const append = redactForDisplay(pending).text;
    this.#shown += append;
    return { append, consumed: pending.length, breach: true };
  }
}

/** No reading of `text` leaves the redaction planner anything undecided or anything to change. */
function settledUnderEveryReading(text: string): boolean {
  for (const reading of displayReadings(text)) {
    // A fresh stream redactor emits exactly the prefix no later text can change, redacted.
    if (new StreamRedactor().push(reading) !== reading) return false;
  }
  return true;
}
