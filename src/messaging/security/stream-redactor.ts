/**
 * Chunk-by-chunk redaction whose output, concatenated, is exactly `redactAll` of the
 * concatenated input.
 *
 * Each stage (exfiltration, then credentials) keeps the text it has not yet emitted.
 * On every push it re-plans that pending text with `eof = false`: the planner reports
 * the earliest offset any rule could still change its mind about (a partial `AKIA…`,
 * an unterminated URL, a trailing word that could grow into a 40-character secret, a
 * PEM header whose END marker has not arrived) and everything before it is emitted.
 * So the held tail is the shortest one that could still become part of a credential
 * or an exfiltration URL. The exfiltration stage's output is the credential stage's
 * input, which is how the pair reproduces `redactCredentials(redactExfiltrationUrls(x))`.
 */
import {
  allowedHostSet,
  type ExfiltrationOptions,
  planCredentialsFull,
  planExfiltrationFull,
  quietCredentialCut,
  quietExfiltrationCut,
  type StagePlan,
  spliceSpans,
} from "./redact.js";

/** Characters of already-emitted text kept as left context (lookbehinds read one). */
const CONTEXT = 16;
/**
 * A pending tail longer than this is re-planned only after it grows by a quarter:
 * an undecided construct that long (a PEM body, a base64 blob) is rarely settled by
 * one more small chunk, and re-reading it on every chunk would cost O(n^2).
 */
const REPLAN_EAGERLY_BELOW = 4096;

type Planner = (text: string, start: number, eof: boolean) => StagePlan;
/** The planner's cut when it provably plans no span (ordinary prose), else -1: skips building a plan. */
type QuietCut = (text: string, start: number, eof: boolean) => number;

class Stage {
  private buf = "";
  /** Offset in `buf` where unemitted text starts (what precedes it is context). */
  private start = 0;
  private lastPlannedPending = 0;

  constructor(
    private readonly quiet: QuietCut,
    private readonly plan: Planner,
  ) {}

  get pending(): number {
    return this.buf.length - this.start;
  }

  push(chunk: string): string {
    if (chunk === "") return "";
    this.buf += chunk;
    const pending = this.pending;
    if (pending > REPLAN_EAGERLY_BELOW && pending < this.lastPlannedPending * 1.25) return "";
    return this.drain(false);
  }

  flush(): string {
    return this.drain(true);
  }

  private drain(eof: boolean): string {
    if (this.pending === 0) return "";
    let cut = this.quiet(this.buf, this.start, eof);
    let out: string;
    if (cut >= 0) {
      cut = Math.max(cut, this.start);
      out = this.buf.slice(this.start, cut);
    } else {
      const plan = this.plan(this.buf, this.start, eof);
      cut = Math.max(plan.cut, this.start);
      out = cut > this.start ? spliceSpans(this.buf, plan.spans, this.start, cut) : "";
    }
    const keepFrom = Math.max(0, cut - CONTEXT);
    this.buf = this.buf.slice(keepFrom);
    this.start = cut - keepFrom;
    this.lastPlannedPending = this.pending;
    return out;
  }
}

export class StreamRedactor {
  private readonly exfil: Stage;
  private readonly creds: Stage;

  constructor(opts: ExfiltrationOptions = {}) {
    const allowed = allowedHostSet(opts);
    this.exfil = new Stage(quietExfiltrationCut, (text, start, eof) =>
      planExfiltrationFull(text, start, eof, allowed),
    );
    this.creds = new Stage(quietCredentialCut, planCredentialsFull);
  }

  /** Feeds a chunk; returns the text that is now final (possibly empty). */
  push(chunk: string): string {
    return this.creds.push(this.exfil.push(chunk));
  }

  /** Ends the stream; returns everything still held, redacted. */
  flush(): string {
    const tail = this.exfil.flush();
    return this.creds.push(tail) + this.creds.flush();
  }

  /** Characters received but not yet emitted (for tests and diagnostics). */
  get held(): number {
    return this.exfil.pending + this.creds.pending;
  }
}
