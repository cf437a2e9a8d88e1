// Types for www/widget.js (shipped as dist/widget.d.ts).

/** The `change` event's detail: the values the widget shows. */
export interface SgmRdpChangeDetail {
  /** sample_rate q */
  q: number;
  /** noise_multiplier σ */
  sigma: number;
  steps: number;
  delta: number;
  /** ε at δ after `steps` steps, optimized over α (continuous). */
  epsilon: number;
  /** The optimal Rényi order. */
  alpha: number;
  conversion: "improved" | "classic";
}

/** `<sgm-rdp-calculator q sigma steps delta mode charts conversion theme>` */
export declare class SgmRdpCalculator extends HTMLElement {
  static readonly observedAttributes: string[];
  /** The values shown, or undefined before the first render. */
  readonly value: SgmRdpChangeDetail | undefined;
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
