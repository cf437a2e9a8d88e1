//! The JS API's TypeScript types, emitted into `sgm-rdp.d.ts` by wasm-bindgen.

use wasm_bindgen::prelude::*;

#[wasm_bindgen(typescript_custom_section)]
const TS_TYPES: &'static str = r#"
/** Sampling rate q = batch / dataset size, under either name. */
export type SampleRate = { q: number } | { sample_rate: number };
/** Noise multiplier σ (noise std / clipping norm), under either name. */
export type NoiseMultiplier = { sigma: number } | { noise_multiplier: number };
/** RDP → (ε, δ) conversion: "improved" (Canonne–Kamath–Steinke, default) or "classic" (Mironov 2017). */
export type Conversion = "improved" | "classic";
export type RdpParams = SampleRate & NoiseMultiplier & {
  /** Orders α > 1 (default: dp_accounting's 156 orders 1.1 … 1024). */
  orders?: number[];
  /** Steps T to compose over (default 1). */
  steps?: number;
};
export interface RdpResult { orders: number[]; rdp: number[]; steps: number; rdpTotal: number[] }
export type EpsilonParams = SampleRate & NoiseMultiplier & {
  steps: number; delta: number; conversion?: Conversion; orders?: number[];
  /** "rdp" (default): exact RDP; "pld": the tight PLD bracket; "both". */
  accountant?: Accountant;
};
export interface EpsilonResult {
  /** ε: exact RDP after continuous refinement of α (never above gridEpsilon); with
   *  accountant "pld", the PLD's certified upper bound. */
  epsilon: number;
  /** The exact-RDP optimum's order (with every accountant). */
  alpha: number;
  /** Best of the order grid (what dp_accounting reports). */
  gridEpsilon: number; gridAlpha: number;
  /** True when the best order is the grid's first or last: widen `orders`. */
  atEdge: boolean;
  /** accountant "pld": the bracket's lower end (the true ε is in [epsilonLower, epsilon]). */
  epsilonLower?: number;
  /** accountant "pld" or "both": the PLD bracket [epsilonPldLower, epsilonPld]; with
   *  "both" null when the tight accountant cannot answer (then `pldError` says why and
   *  the RDP fields stand). */
  epsilonPld?: number | null; epsilonPldLower?: number | null;
  /** accountant "both": why the tight ε is unavailable. */
  pldError?: string;
  /** accountant "pld": the exact-RDP ε, for comparison. */
  epsilonRdp?: number;
}
/** How batches are drawn and who is neighbour (sgm-rdp-async.js only; the synchronous
 *  module refuses these keys and names the async one): the command line's
 *  `--sampling`, `--adjacency`, `--steps-per-epoch`, … as one `batch` line. */
export interface SchemeParams {
  sampling?: "poisson" | "shuffle" | "fixed-size" | "truncated-poisson" | "random-allocation" | "balls-in-bins";
  adjacency?: "add-remove" | "replace-one";
  /** Steps per epoch t (or t = ⌈datasetSize / batchSize⌉). */
  stepsPerEpoch?: number; datasetSize?: number; batchSize?: number;
  epochs?: number;
  /** Random allocation: each example in `selected` of the t steps (default 1). */
  selected?: number;
  /** Truncated Poisson: the batch cap B. */
  maxBatch?: number;
  /** User-level privacy: examples per user. */
  groupSize?: number;
  q?: number; sigma?: number; noise_multiplier?: number; sample_rate?: number; steps?: number;
  accountant?: Accountant;
}
/** The command line's `batch` answer with camelCase keys: `epsilon` (or `delta`) is the
 *  certified upper bound, `epsilonLower` (`deltaLower`) a certified lower bound on the
 *  true value, `meaning` says what the two ends are. */
export interface SchemeResult {
  epsilon: number; delta: number; sampling: string; adjacency: string; accountant: string;
  meaning?: string; epsilonLower?: number; deltaLower?: number;
  stepsPerEpoch?: number; epochs?: number; steps?: number; selected?: number; sigma: number;
  [key: string]: unknown;
}
/** μ-GDP with its fit (sgm-rdp-async.js): μ is certified for tests with FPR and FNR ≥
 *  `fprFloor`, [muLower, mu] its bracket; `regret` how far the run's trade-off curve is
 *  from the Gaussian one (0: exactly Gaussian); `tradeoff` certified bounds at FPR 1e-10 … 0.1. */
export interface GdpResult {
  mu: number; muLower: number; regret: number; fprFloor: number;
  advantage: number; advantageLower: number;
  tradeoff: { fpr: number; fnrMin: number; tprMax: number }[];
  [key: string]: unknown;
}
export type DeltaParams = SampleRate & NoiseMultiplier & {
  steps: number; epsilon: number; conversion?: Conversion; orders?: number[];
  /** "rdp" (default): exact RDP; "pld": the tight PLD bracket; "both". */
  accountant?: Accountant;
};
export interface DeltaResult {
  /** δ: exact RDP (default), or with accountant "pld" the PLD's certified upper bound. */
  delta: number; alpha: number; gridDelta: number; gridAlpha: number; atEdge: boolean;
  /** accountant "pld": the bracket's lower end. */
  deltaLower?: number;
  /** accountant "pld" or "both": the PLD bracket [deltaPldLower, deltaPld]; with "both"
   *  null when the tight accountant cannot answer (`pldError` says why). */
  deltaPld?: number | null; deltaPldLower?: number | null;
  /** accountant "both": why the tight δ is unavailable. */
  pldError?: string;
  /** accountant "pld": the exact-RDP δ, for comparison. */
  deltaRdp?: number;
}
export type CalibrateSigmaParams = SampleRate & {
  epsilon: number; delta: number; steps: number; conversion?: Conversion; orders?: number[];
  /** "rdp" (default) or "pld": meet the target with the PLD's certified upper bound. */
  accountant?: "rdp" | "pld";
};
export interface CalibrateSigmaResult {
  sigma: number;
  /** ε at that σ (RDP, or the PLD's certified upper bound); never above the target. */
  epsilon: number;
  /** The RDP optimum's order (null with accountant "pld", which has none). */
  alpha: number | null; atLowerLimit: boolean;
  /** accountant "pld": the bracket's lower end at that σ. */
  epsilonLower?: number;
}
export type CalibrateStepsParams = SampleRate & NoiseMultiplier & {
  epsilon: number; delta: number; conversion?: Conversion; orders?: number[];
  /** "rdp" (default) or "pld". */
  accountant?: "rdp" | "pld";
};
export interface CalibrateStepsResult {
  steps: number; epsilon: number;
  /** The RDP optimum's order (null with accountant "pld", which has none). */
  alpha: number | null; atUpperLimit: boolean; epsilonLower?: number;
}
export type BoundsParams = SampleRate & NoiseMultiplier & {
  /** Orders to evaluate (default [2, 8, 32, 128]). */
  orders?: number[];
};
export interface Bound {
  /** "theorem11" (Mironov–Talwar–Zhang, Thm 11), "abadi", "bun", "lemma9". */
  name: string;
  /** The bound's per-step RDP value at α (also where it does not apply); null: no finite bound. */
  value: number | null;
  /** null when every stated condition holds, else the failing condition. */
  fails: string | null;
}
export interface BoundsAtOrder { alpha: number; exact: number; bounds: Bound[] }
export interface MaxOrder { cond4: number; cond5: number; min: number; exact: number }
export interface BoundsResult { orders: BoundsAtOrder[]; maxAlpha: MaxOrder }
export type CompareParams = SampleRate & NoiseMultiplier & { steps: number; delta: number };
/** Which accountant answers: exact RDP (default), the tight PLD bracket, or both. */
export type Accountant = "rdp" | "pld" | "both";
export type ProfileParams = SampleRate & NoiseMultiplier & {
  steps: number;
  /** ε values (≥ 0, at most 10000); default 101 points on [0, epsilonMax]. */
  epsilons?: number[];
  /** Largest ε of the default grid (default 10). */
  epsilonMax?: number;
};
export interface ProfilePoint { epsilon: number; delta: { upper: number; lower: number } }
export type AttackRiskParams = SampleRate & NoiseMultiplier & {
  steps: number;
  /** False-positive rates in [0, 1] (default [0.001, 0.01, 0.1]). */
  fpr?: number[];
};
export interface AttackRiskResult {
  /** The bound on a membership-inference attack's true-positive rate at each false-positive rate. */
  fpr: number[]; tpr: number[];
  /** The same bound as a curve (60 log-spaced false-positive rates from 1e-6 to 1). */
  curve: { fpr: number; tpr: number }[];
}
export type TrainingParams = SampleRate & NoiseMultiplier & {
  steps: number; delta: number;
  /** Number of checkpoints from the first step to `steps` (default 24, at most 200). */
  points?: number;
};
export interface TrainingResult {
  /** Checkpoints (steps), log-spaced up to `steps`. */
  steps: number[];
  /** PLD certified upper and lower ε at each checkpoint (a chart's precision: each
   *  bracket at most 0.5 % wide; `epsilon({accountant: "pld"})` for the 0.04 % one). */
  pldUpper: number[]; pldLower: number[];
  /** Exact-RDP ε (improved conversion, continuous α) at each checkpoint. */
  rdp: number[];
}
export interface Route {
  /** Stable identifier: "rdp_improved", "rdp_classic", "theorem11", "abadi", "bun",
   *  "per_step_naive", "per_step_advanced" or "cdp". */
  id: string;
  /** e.g. "exact RDP, improved conversion", "Abadi et al. (Table 1), an estimate", "CDP (Dwork–Rothblum, Thm 3.2, 3.4, Cor 3.1)". */
  name: string;
  /** The route's ε, or null where it does not apply or gives no finite guarantee (the note says which). */
  epsilon: number | null;
  /** Why it does not apply ("n/a: …"), or a caveat. */
  note: string | null;
}
"#;
