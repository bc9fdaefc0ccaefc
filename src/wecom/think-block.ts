/**
 * The reasoning a WeCom bubble shows in `<think></think>` (WeCom's own folded block, frame.ts puts
 * it first). Each bubble shows the reasoning since the bubble before it was sealed or rolled, and it
 * is redacted on the JOINED text: the driver redacts each thinking chunk alone, so a key split across
 * two chunks is whole again only here.
 */
import { displaySafeFor } from "../messaging/text/options.js";
import { WECOM_CAPABILITIES } from "./transport.js";

export class ThinkBlock {
  private text = "";
  private from = 0;

  add(chunk: string): void {
    this.text += chunk;
  }

  /** Where the reasoning of the next bubble to open begins. */
  get start(): number {
    return this.from;
  }

  /** The reasoning since `mark`, display-safe on the joined text; "" when there is none. */
  since(mark: number): string {
    const text = this.text.slice(mark);
    return text.trim() ? displaySafeFor(text, WECOM_CAPABILITIES) : "";
  }

  /** A bubble was sealed or rolled: the reasoning it showed is not shown again. */
  cut(): void {
    this.from = this.text.length;
  }
}
