// Types for www/widget.js (shipped as dist/widget.d.ts).

/** The `change` event's detail: the values the widget shows. */
export interface SgmRdpChangeDetail {
  /** sample_rate q */
  q: number;
  /** noise_multiplier σ */
  sigma: number;
  steps: number;
  delta: number;
  /** Exact-RDP ε at δ after `steps` steps, optimized over α (continuous); an upper bound.
   * Null with a `sampling` other than "poisson" or a `groupSize` above 1 (exact RDP is one
   * example's under Poisson sampling). */
  epsilon: number | null;
  /** The optimal Rényi order (null as for `epsilon`). */
  alpha: number | null;
  conversion: "improved" | "classic";
  /** The tight ε (privacy-loss distribution, certified upper bound); null with
   * accountant="rdp" or when the tight accountant is unavailable. */
  epsilonPld: number | null;
  /** The lower end of the tight ε's certified bracket; null as for `epsilonPld`. */
  epsilonPldLower: number | null;
  /** The `sampling` attribute: "poisson" (default), "shuffled" (then `epsilonPld` and
   * `epsilonPldLower` are the certified band: no amplification above, Chua et al.'s shuffled
   * pair below) or "random-allocation" (the certified bracket of one-in-t allocation);
   * t = ⌊1/q⌋ steps per epoch and ⌈steps·q⌉ epochs. */
  sampling: "poisson" | "shuffled" | "random-allocation" | "truncated-poisson" | "fixed-size";
  /** The `dataset-size` attribute N for "truncated-poisson" (rate q over N examples) and
   * "fixed-size" (B = q·N of N without replacement, replace-one; `epsilonPld` is an RDP upper
   * bound and `epsilonPldLower` 0, the trivial lower bound); null for the other schemes or
   * when not given. */
  datasetSize: number | null;
  /** Truncated Poisson's largest batch as asked (the `max-batch` attribute, or q·N plus four
   * standard deviations); null for the other schemes. */
  maxBatch: number | null;
  /** The `group-size` attribute (1 by default): above 1, `epsilonPld` and `epsilonPldLower` are
   * user-level (users with at most that many examples, Poisson sampling) and `epsilon`,
   * `alpha` (one example's exact RDP) are null. */
  groupSize: number;
  /** The `adjacency` attribute: "add-remove" (default) or "replace-one" (then `epsilonPld`
   * is the tight ε under replace-one and `epsilon`, `alpha` are null). */
  adjacency: "add-remove" | "replace-one";
}

/** `<sgm-rdp-calculator q sigma steps delta mode accountant charts conversion theme calculator sampling group-size adjacency dataset-size max-batch>` */
export declare class SgmRdpCalculator extends HTMLElement {
  static readonly observedAttributes: string[];
  /** The values shown, or undefined before the first render. */
  readonly value: SgmRdpChangeDetail | undefined;
  /** Chart `which` of the values shown as an SVG document (light theme, 900 × 560, the run
   *  named under it), or with format "csv" the tight charts' data (every series); null when the
   *  widget does not show that chart or has no answer for the values shown yet. */
  exportChart(which?: "epsilon" | "bound" | "training" | "profile" | "risk", format?: "svg" | "csv"): string | null;
  // Properties mirror the attributes: read the attribute's text, write any value (null removes it).
  get q(): string | null;
  set q(v: number | string | null | undefined);
  get sigma(): string | null;
  set sigma(v: number | string | null | undefined);
  get steps(): string | null;
  set steps(v: number | string | null | undefined);
  get delta(): string | null;
  set delta(v: number | string | null | undefined);
  get mode(): string | null;
  set mode(v: "compact" | "full" | null | undefined);
  get accountant(): string | null;
  set accountant(v: "both" | "pld" | "rdp" | null | undefined);
  get charts(): string | null;
  set charts(v: string | null | undefined);
  get conversion(): string | null;
  set conversion(v: "improved" | "classic" | null | undefined);
  get theme(): string | null;
  set theme(v: "auto" | "light" | "dark" | null | undefined);
  get calculator(): string | null;
  set calculator(v: string | null | undefined);
  get sampling(): string | null;
  set sampling(v: "poisson" | "shuffled" | "shuffle" | "random-allocation" | "balls-in-bins" | "truncated-poisson" | "fixed-size" | null | undefined);
  /** The `dataset-size` attribute (truncated-poisson, fixed-size). */
  get datasetSize(): string | null;
  set datasetSize(v: number | string | null | undefined);
  /** The `max-batch` attribute (truncated-poisson). */
  get maxBatch(): string | null;
  set maxBatch(v: number | string | null | undefined);
  /** The `group-size` attribute. */
  get groupSize(): string | null;
  set groupSize(v: number | string | null | undefined);
  /** The `adjacency` attribute. */
  get adjacency(): string | null;
  set adjacency(v: "add-remove" | "replace-one" | null | undefined);
  addEventListener(
    type: "change",
    listener: (this: SgmRdpCalculator, ev: CustomEvent<SgmRdpChangeDetail>) => unknown,
    options?: boolean | AddEventListenerOptions,
  ): void;
  addEventListener(
    type: string,
    listener: EventListenerOrEventListenerObject,
    options?: boolean | AddEventListenerOptions,
  ): void;
}

/** Resolves once the wasm is loaded (the element works without awaiting it). */
export declare function whenReady(): Promise<void>;

declare global {
  interface HTMLElementTagNameMap {
    "sgm-rdp-calculator": SgmRdpCalculator;
  }
}
