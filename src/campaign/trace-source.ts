/**
 * Forwards the slot bank's write events to the current unit try's recorder, for one segment: `close()` takes its
 * listener off the bank (the slot's bank outlives the segment; a listener left behind would keep the segment's
 * last recorder alive and running on every later write).
 */
import type { BankWriteEvent, InstallTarget } from '../interventions/index.js';

export class TraceSource {
  private listener: ((e: BankWriteEvent) => void) | null = null;
  private readonly remove: (() => void) | null;
  constructor(private readonly target: InstallTarget | null) {
    this.remove = target?.onWrite((e) => this.listener?.(e)) ?? null;
  }
  records(scope: string): ReturnType<InstallTarget['records']> {
    return this.target?.records(scope) ?? [];
  }
  onWrite(listener: (e: BankWriteEvent) => void): () => void {
    this.listener = listener;
    return () => {
      if (this.listener === listener) this.listener = null;
    };
  }
  close(): void {
    this.listener = null;
    this.remove?.();
  }
}
