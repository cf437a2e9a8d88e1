// Types of sgm-rdp-async.js: the JS API of sgm-rdp.js, each call a Promise computed in a
// Web Worker (the worker-only wasm: the whole engine).
import type {
  RdpParams, RdpResult, EpsilonParams, EpsilonResult, DeltaParams, DeltaResult, ProfileParams, ProfilePoint,
  AttackRiskParams, AttackRiskResult, TrainingParams, TrainingResult, CalibrateSigmaParams, CalibrateSigmaResult,
  CalibrateStepsParams, CalibrateStepsResult, BoundsParams, BoundsResult, CompareParams, Route,
  SchemeParams, SchemeResult, GdpResult,
} from './sgm-rdp.js';

/** `signal`: aborting rejects with an AbortError and stops the call if it is running. */
export interface CallOptions { signal?: AbortSignal }
export function rdp(p: RdpParams, o?: CallOptions): Promise<RdpResult>;
export function epsilon(p: EpsilonParams, o?: CallOptions): Promise<EpsilonResult>;
/** A sampling scheme, adjacency or group (any SchemeParams key): the command line's answer. */
export function epsilon(p: SchemeParams & { delta: number }, o?: CallOptions): Promise<SchemeResult>;
export function delta(p: DeltaParams, o?: CallOptions): Promise<DeltaResult>;
export function delta(p: SchemeParams & { epsilon: number }, o?: CallOptions): Promise<SchemeResult>;
export function profile(p: ProfileParams, o?: CallOptions): Promise<ProfilePoint[]>;
/** μ-GDP with its fit (the command line's `gdp`), for Poisson sampling or any scheme. */
export function gdp(p: SchemeParams, o?: CallOptions): Promise<GdpResult>;
export function attackRisk(p: AttackRiskParams, o?: CallOptions): Promise<AttackRiskResult>;
export function epsilonOverTraining(p: TrainingParams, o?: CallOptions): Promise<TrainingResult>;
export function calibrateSigma(p: CalibrateSigmaParams, o?: CallOptions): Promise<CalibrateSigmaResult>;
export function calibrateSteps(p: CalibrateStepsParams, o?: CallOptions): Promise<CalibrateStepsResult>;
export function bounds(p: BoundsParams, o?: CallOptions): Promise<BoundsResult>;
export function compare(p: CompareParams, o?: CallOptions): Promise<Route[]>;
/** One `sgm-rdp batch` line (a JSON string) → its answer line (a JSON string), as the command line gives it. */
export function batchLine(line: string, o?: CallOptions): Promise<string>;
/** One command line — the words after `sgm-rdp`, e.g. ["gdp", "--q", "0.01", "--sigma", "1", "--steps", "1000", "--json"] —
 *  → what the command line prints on stdout (every command and flag: μ-GDP, attack-risk calibration, user-level ε, schemes). */
export function command(args: string[], o?: CallOptions): Promise<string>;
/** A training configuration in its library's own terms (docs/check.md): Opacus, dp_accounting, jax-privacy or TF Privacy. */
export interface CheckParams {
  library: 'opacus' | 'dp_accounting' | 'jax_privacy' | 'tf_privacy';
  noise_multiplier: number;
  delta?: number; target_delta?: number;
  sample_rate?: number; dataset_size?: number; number_of_examples?: number; batch_size?: number;
  epochs?: number; num_epochs?: number; steps?: number;
  [key: string]: number | string | boolean | undefined;
}
/** One mismatch: its catalogue id, severity, the sentence, the fix and its source. */
export interface CheckFinding { id: string; severity: 'unsafe' | 'caution' | 'info'; finding: string; fix: string; source: string; /** The configuration keys that set it. */ keys: string[] }
/** What the library prints (null with printedWhy where not emulated), the certified ε of the code that ran
 *  (a certified upper bound; certifiedEpsilonLower the lower end of its bracket or band; null with certifiedWhy
 *  where no certified number exists), the run the code made (run*), and the findings. */
export interface CheckResult {
  library: string; libraryAccountant: string; libraryQ: number; librarySteps: number; delta: number;
  printedEpsilon: number | null; printedBy?: string; printedWhy?: string; printedEpsilonOncePerEpoch?: number;
  certifiedEpsilon: number | null; certifiedEpsilonLower?: number; certifiedMeaning?: string; certifiedWhy?: string;
  runSampling: string; runAdjacency: string; runSigma: number; runQ?: number; runSteps: number; runCopiesPerExample: number;
  findings: CheckFinding[];
}
/** A training configuration checked: what its library prints, what the code that ran guarantees, each mismatch by name. */
export function check(p: CheckParams, o?: CallOptions): Promise<CheckResult>;
/** Canary scores for an audit (docs/audit.md): a higher score means "more likely a member" unless lowerIsMember. */
export interface AuditParams {
  inScores: number[] | Float64Array | Float32Array;
  outScores: number[] | Float64Array | Float32Array;
  /** The ε lower bounds are read at this δ (without it only the μ bounds). */
  delta?: number;
  /** Each bound holds with probability ≥ 1 − significance (default 0.05). */
  significance?: number;
  fprs?: number[];
  threshold?: number;
  lowerIsMember?: boolean;
  /** The run (optional): its certified ε and μ beside the audit. */
  q?: number; sampleRate?: number; sigma?: number; noiseMultiplier?: number; steps?: number;
  datasetSize?: number; batchSize?: number; epochs?: number; sampling?: string; adjacency?: string; groupSize?: number;
  stepsPerEpoch?: number; maxBatch?: number; selected?: number;
}
/** One test's empirical TPR at an FPR with its exact two-sided interval. */
export interface AuditRocPoint { fpr: number; threshold: number; tpr: number; tprLower: number; tprUpper: number; fprUpper: number }
/** Empirical lower bounds (each at 1 − significance, under its assumptions), and the certificate beside them when the run is given. */
export interface AuditResult {
  members: number; nonMembers: number; significance: number; auc: number; roc: AuditRocPoint[];
  muLower: number; muLowerGdp: number; muLowerOneRunFdp: number;
  epsilonLower?: number; epsilonLowerMethod?: string; epsilonLowerClopperPearson?: number; epsilonLowerOneRun?: number;
  epsilonGdpEstimate?: number; epsilonOneRunFdpEstimate?: number; delta?: number;
  clopperPearson?: Record<string, number | null>; oneRun?: Record<string, number>; gdp: Record<string, number | null>; oneRunFdp: Record<string, number>;
  certifiedEpsilon?: number; certifiedMu?: number; epsilonRatio?: number; consistent?: boolean; verdict?: string;
}
export interface AuditPlanRow { canaries: number; clopperPearson: number; gdpMu: number; gdpEpsilon: number; oneRun: number; oneRunCeiling: number }
export interface AuditPlanResult {
  mu: number; epsilon: number; delta: number; significance: number; fraction: number; rows: AuditPlanRow[];
  twoSampleCanaries: number | null; oneRunCanaries: number | null; certifiedEpsilon: number; certifiedMu: number;
}
export function audit(p: AuditParams, o?: CallOptions): Promise<AuditResult>;
/** Correlated noise (DP-FTRL / BandMF / BLT / tree aggregation) (docs/correlated-noise.md); the answer's "bound" says what its ends mean. */
export interface CorrelatedParams {
  /** "band:b", "band:b,c0,...,c(b-1)" (a banded Toeplitz C's first column), "blt:decay:scale[,decay:scale...]", "tree", or "matrix" (with strategyMatrix). */
  strategy: string;
  /** The rows of an explicit lower-triangular C (strategy "matrix"); a row may stop at its diagonal. */
  strategyMatrix?: number[][];
  /** "min-sep" (as many partitions as bands, the default), "min-sep:k", "poisson", "balls-in-bins:t" (a fresh bin each epoch) or "cyclic-bins:t" (jax-privacy's BallsInBinsSampling). */
  participation?: string;
  /** Draws per direction of a seeded Monte Carlo estimate beside the bound (the bins participations, "band:" strategies); answered under `estimate`, never a bound. */
  monteCarlo?: number;
  /** The rate within the partition a step samples (or sampleRate). */
  q?: number; sampleRate?: number;
  /** Noise std / (clipping norm x the strategy's largest column norm) (or noiseMultiplier); not for "calibrate". */
  sigma?: number; noiseMultiplier?: number;
  steps?: number; datasetSize?: number; batchSize?: number; epochs?: number;
  delta?: number; epsilon?: number;
  command?: 'epsilon' | 'delta' | 'calibrate';
}
export interface CorrelatedResult {
  /** Certified upper bound (epsilon, or the target for "delta"); epsilonLower/deltaLower: the bracket's lower end. */
  epsilon: number; epsilonLower?: number; delta: number; deltaLower?: number;
  q: number; sigma: number; steps: number; strategy: string; participation: string;
  /** bands: null when the strategy is not banded (BLT, tree). */
  bands: number | null; partitions: number; worstPartition: number; participations: number;
  columnNorm: number; composed: [number, number][]; rounded: boolean; scheme: string;
  /** What the answer's ends mean: "bracket (exact reduction)", "bracket (Gaussian mechanism, no amplification)", "upper bound (noise splitting)", "upper bound (operator norm)", "upper bound (common mode)" or "upper bound (no amplification)". */
  bound: string;
  /** Without amplification: the run's L2 sensitivity (clipping norms x largest column norm). */
  sensitivity?: number;
  /** Cyclic bins with C >= 0: the common-mode split's shared (a) and random-allocation (s) sensitivities. */
  commonMode?: { a: number; s: number };
  /** With monteCarlo: a seeded Monte Carlo estimate (epsilon, delta or sigma) with its 99 % interval; never a bound. */
  estimate?: { epsilon?: number; delta?: number; sigma?: number; interval: [number, number]; confidence: number; samples: number; seed: number; meaning: string };
}
export function correlated(p: CorrelatedParams, o?: CallOptions): Promise<CorrelatedResult>;
export function auditPlan(p: SchemeParams & { delta: number; significance?: number; fraction?: number }, o?: CallOptions): Promise<AuditPlanResult>;
/** End the worker (pending calls reject with an AbortError); the next call starts a new one. */
export function terminate(): void;
/** The wasm memory (bytes) above which the worker is replaced after a call (default 256 MB). */
export function setMemoryBound(bytes: number): void;
/** How many workers this module has started. */
export function workersStarted(): number;
export const functions: string[];
