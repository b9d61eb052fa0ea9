/**
 * A look over bridge.db that runs one at a time: asked again while it runs, one more pass follows
 * it (never more), so whatever changed meanwhile is seen. Used by the decision displays.
 */
export class SerialPass {
  readonly #run: () => Promise<void>;
  readonly #failed: (err: unknown) => void;
  #pass: Promise<void> | undefined;
  #again = false;

  /** `run` is one pass; `failed` hears a pass that threw (the next request runs anew). */
  constructor(run: () => Promise<void>, failed: (err: unknown) => void) {
    this.#run = run;
    this.#failed = failed;
  }

  /** Schedules a pass (one at a time; asked during one, another follows it). */
  schedule(): void {
    if (this.#pass) {
      this.#again = true;
      return;
    }
    this.#pass = this.#run()
      .catch(this.#failed)
      .finally(() => {
        this.#pass = undefined;
        if (this.#again) {
          this.#again = false;
          this.schedule();
        }
      });
  }

  /** Resolves once no pass runs (tests, stop). */
  async idle(): Promise<void> {
    while (this.#pass) await this.#pass;
  }
}
