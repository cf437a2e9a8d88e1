//! Batching schemes, adjacency and user-level privacy: one query for the command line
//! (`epsilon|delta --sampling … --adjacency … --group-size …`) and for `batch` lines
//! (keys `sampling`, `adjacency`, `steps_per_epoch`, `dataset_size`, `batch_size`,
//! `epochs`, `group_size`), so both front ends give the same numbers and the same refusals.

use super::{Accountant, Request};
use crate::decimal::{self, Dir};
use crate::engine::error::show;
use crate::engine::math::powf;
use crate::engine::pld::shuffle::{self, Shuffle};
use crate::engine::pld::{self, Bracket, Phase};
use crate::engine::{self, Adjacency, Sgm};
use serde_json::{json, Map, Value};

/// The δ brackets of a profile on a grid of ε.
/// A run's privacy profile at the ε values asked.
type Points<'a> = dyn Fn(&[f64]) -> Result<Vec<pld::ProfilePoint>, String> + 'a;
type Profile = Box<Points<'static>>;

/// n + 1 equally spaced points of [0, top].
fn grid(top: f64, n: usize) -> Vec<f64> {
    (0..=n).map(|i| top * i as f64 / n as f64).collect()
}

/// A profile's fields (`profile`, `attack`, `attack_curve`) into `out`: δ(ε) on 101 points of
/// [0, `top`] (default 10), and the membership-inference bounds at FPR 0.1 %, 1 %, 10 % with
/// the trade-off curve from a profile of their own up to 1.2 × `far` (the ε at δ = 1e-12), so
/// they do not depend on the range shown.
pub(super) fn profile_fields(
    points: &Points<'_>,
    far: f64,
    top: Option<f64>,
    out: &mut Map<String, Value>,
) -> Result<(), String> {
    let e = |e: engine::Error| e.to_string();
    let shown_grid = pld::profile_grid(top).map_err(|top| {
        format!(
            "epsilon (the profile's largest epsilon) must be in (0, 1e4], got {}",
            show(top)
        )
    })?;
    let shown = points(&shown_grid)?;
    let attack = points(&grid(far.max(1e-3) * 1.2, 200))?;
    let risk: Vec<Value> = pld::DEFAULT_FPRS
        .iter()
        .map(|&fpr| pld::attack_tpr(&attack, fpr).map(|t| json!({"fpr": fpr, "tpr_max": t})))
        .collect::<Result<_, _>>()
        .map_err(e)?;
    // The trade-off curve at 60 FPRs from 1e-6 to 1 (the attack-risk chart's; the JS API's
    // attackRisk draws the same grid for Poisson sampling).
    let curve: Vec<Value> = (0..60)
        .map(|i| {
            let fpr = powf(10f64, -6.0 + 6.0 * i as f64 / 59.0);
            pld::attack_tpr(&attack, fpr).map(|t| json!({"fpr": fpr, "tpr": t}))
        })
        .collect::<Result<_, _>>()
        .map_err(e)?;
    out.insert("profile".into(), json!(shown));
    out.insert("attack".into(), json!(risk));
    out.insert("attack_curve".into(), json!(curve));
    Ok(())
}

/// One phase's profile, and the ε at δ = 1e-12 that bounds the attack's grid.
fn phase_profile(phase: Phase) -> Result<(Profile, f64), String> {
    let far = pld::epsilon_phases(&[phase], 1e-12)
        .map_err(|x| x.to_string())?
        .epsilon
        .upper;
    let f = move |g: &[f64]| -> Result<Vec<pld::ProfilePoint>, String> {
        Ok(pld::profile_phases(&[phase], g)
            .map_err(|x| x.to_string())?
            .into_iter()
            .map(|p| p.0)
            .collect())
    };
    Ok((Box::new(f), far))
}

/// The bracket asked ("epsilon" at δ = `given`, or "delta" at ε = `given`) of one phase.
fn phase_bracket(phase: Phase, name: &str, given: f64) -> Result<Bracket, String> {
    let e = |e: engine::Error| e.to_string();
    Ok(match name {
        "epsilon" => pld::epsilon_phases(&[phase], given).map_err(e)?.epsilon,
        _ => pld::delta_phases(&[phase], given).map_err(e)?.delta,
    })
}

/// User-level ε (at δ = `given`) or δ (at ε = `given`) by exact RDP and group privacy
/// (Vadhan's Lemma 2.2, TF Privacy's route): the answer's fields, certified upper bound.
fn group_rdp(
    sgm: Sgm,
    steps: u64,
    k: u32,
    name: &str,
    given: f64,
) -> Result<Map<String, Value>, String> {
    use engine::group_rdp;
    let e = |e: engine::Error| e.to_string();
    let mut out = Map::new();
    if name == "epsilon" {
        let g = group_rdp::epsilon(sgm, steps, k, given).map_err(e)?;
        out.insert("delta".into(), json!(given));
        out.insert("epsilon".into(), json!(g.epsilon));
        out.insert("alpha".into(), json!(g.alpha));
        out.insert("example_epsilon".into(), json!(g.example_epsilon));
        out.insert("example_delta".into(), json!(g.example_delta));
    } else {
        let (d, a) = group_rdp::delta(sgm, steps, k, given).map_err(e)?;
        out.insert("epsilon".into(), json!(given));
        out.insert("delta".into(), json!(d));
        out.insert("alpha".into(), json!(a));
        out.insert("example_epsilon".into(), json!(given / k as f64));
    }
    out.insert("meaning".into(), json!(format!(
        "{name}: certified upper bound from exact RDP and group privacy (Vadhan 2017, Lemma 2.2: a group of k is (k*eps', delta'*(e^(k*eps')-1)/(e^eps'-1))-DP; TF Privacy's user-level route); no lower bound; the tight accountant's {name} (accountant pld) is much smaller"
    )));
    Ok(out)
}

/// How batches are drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Sampling {
    /// Each example independently with rate q (Opacus' default; what `q` means).
    #[default]
    Poisson,
    /// A random permutation per epoch cut into fixed-size batches.
    Shuffle,
    /// Poisson with rate q over N examples, batches capped at `max_batch`.
    TruncatedPoisson,
    /// Each step a uniformly random B of the N examples (replace-one, RDP only).
    FixedSize,
    /// Each example in k of the t steps of an epoch, uniformly at random (balls in bins).
    RandomAllocation,
}

impl Sampling {
    pub fn parse(s: &str) -> Result<Sampling, String> {
        match s {
            "poisson" => Ok(Sampling::Poisson),
            "shuffle" | "shuffled" => Ok(Sampling::Shuffle),
            "truncated-poisson" => Ok(Sampling::TruncatedPoisson),
            "fixed-size" => Ok(Sampling::FixedSize),
            "random-allocation" | "balls-in-bins" => Ok(Sampling::RandomAllocation),
            other => Err(format!(
                "sampling must be 'poisson', 'shuffle', 'truncated-poisson', 'fixed-size' or 'random-allocation', got '{}'",
                other.chars().take(32).collect::<String>()
            )),
        }
    }
    pub(super) fn name(self) -> &'static str {
        match self {
            Sampling::Poisson => "poisson",
            Sampling::Shuffle => "shuffle",
            Sampling::TruncatedPoisson => "truncated-poisson",
            Sampling::FixedSize => "fixed-size",
            Sampling::RandomAllocation => "random-allocation",
        }
    }
}

pub(super) fn adjacency(s: &str) -> Result<Adjacency, String> {
    Adjacency::parse(s).ok_or_else(|| {
        format!(
            "adjacency must be 'add-remove' or 'replace-one', got '{}'",
            s.chars().take(32).collect::<String>()
        )
    })
}

/// A whole number ≥ 1 (steps per epoch, dataset and batch sizes).
fn whole(name: &str, v: f64) -> Result<u64, String> {
    if v.is_finite() && v >= 1.0 && v.fract() == 0.0 && v <= engine::MAX_STEPS as f64 {
        Ok(v as u64)
    } else {
        Err(format!(
            "{name} must be a whole number >= 1, got {}",
            show(v)
        ))
    }
}

impl Request {
    /// Nothing beyond Poisson sampling of one example under add/remove: the plain route.
    pub(super) fn is_plain(&self) -> bool {
        self.sampling == Sampling::Poisson
            && self.adjacency == Adjacency::AddRemove
            && self.group.is_none()
            && self.steps_per_epoch.is_none()
            && self.max_batch.is_none()
            && self.selected.is_none()
    }

    /// A key as the user wrote it: `--group-size` on the command line, `group_size` in batch.
    fn key(&self, k: &str) -> String {
        if self.cli {
            format!("--{}", k.replace('_', "-"))
        } else {
            k.to_string()
        }
    }

    fn sigma(&self) -> Result<f64, String> {
        self.sigma.ok_or_else(|| "missing sigma".into())
    }

    /// The answer's fields: what was asked (resolved), the result and its lower end, and
    /// what the two ends mean.
    pub(super) fn answer(&self) -> Result<Map<String, Value>, String> {
        let mut out = Map::new();
        out.insert("sampling".into(), json!(self.sampling.name()));
        out.insert("adjacency".into(), json!(self.adjacency.name()));
        let r = match self.sampling {
            Sampling::Poisson | Sampling::TruncatedPoisson => self.poisson(&mut out),
            Sampling::Shuffle => self.shuffle(&mut out),
            Sampling::FixedSize => self.fixed_size(&mut out),
            Sampling::RandomAllocation => self.allocation(&mut out),
        };
        // Messages name keys as the user wrote them; the PLD refusal points to the exact-RDP
        // route where one exists (user level under Poisson sampling and add/remove: RDP
        // with group privacy), and says there is none elsewhere.
        let rdp_route = self.sampling == Sampling::Poisson
            && self.adjacency == engine::Adjacency::AddRemove
            && self.group.is_some_and(|k| k > 1.0);
        r.map_err(|m| {
            let instead = if rdp_route {
                if self.cli {
                    "; exact RDP with group privacy still answers (--accountant rdp)"
                } else {
                    "; exact RDP with group privacy still answers (accountant \"rdp\")"
                }
            } else {
                " (no exact-RDP route exists for this sampling scheme or adjacency)"
            };
            let m = m.replace("; the exact-RDP epsilon still applies", instead);
            if !self.cli {
                return m;
            }
            [
                "steps_per_epoch",
                "dataset_size",
                "batch_size",
                "max_batch",
                "selected",
            ]
            .iter()
            .fold(m, |m, k| m.replace(k, &self.key(k)))
        })?;
        Ok(out)
    }

    /// The delta (→ ε) or epsilon (→ δ) asked: ("epsilon" | "delta", the given value).
    fn asked(&self) -> Result<(&'static str, f64), String> {
        match (self.delta, self.epsilon) {
            (Some(d), None) => Ok(("epsilon", d)),
            (None, Some(e)) => Ok(("delta", e)),
            (Some(_), Some(_)) => {
                Err("give delta (for epsilon) or epsilon (for delta), not both".into())
            }
            (None, None) => Err("missing delta".into()),
        }
    }

    /// The phase of a Poisson-like query (replace-one, user-level, truncated):
    /// (phase, q, steps, group size, truncated).
    fn poisson_phase(
        &self,
        out: &mut Map<String, Value>,
    ) -> Result<(Phase, f64, u64, u32, bool), String> {
        let e = |e: engine::Error| e.to_string();
        if self.steps_per_epoch.is_some() {
            return Err("steps_per_epoch applies to shuffled batches (sampling shuffle)".into());
        }
        let truncated = self.sampling == Sampling::TruncatedPoisson;
        // Without max_batch truncated Poisson takes the default the help states (q·N plus
        // four standard deviations of the batch size), as the page and the widget do.
        if !truncated && self.max_batch.is_some() {
            return Err("max_batch applies to sampling truncated-poisson".into());
        }
        if truncated
            && (self.group.is_some_and(|k| k != 1.0) || self.adjacency != Adjacency::AddRemove)
        {
            return Err("truncated-poisson is available for one example per user under add/remove adjacency".into());
        }
        let rdp_group =
            !truncated && self.group.is_some() && self.adjacency == Adjacency::AddRemove;
        if self.accountant != Some(Accountant::Pld) && !rdp_group {
            let what = if truncated {
                "truncated-poisson".into()
            } else if self.group.is_some() {
                self.key("group_size")
            } else {
                "replace-one adjacency".into()
            };
            let add = if self.cli {
                "--accountant pld"
            } else {
                "\"accountant\": \"pld\""
            };
            return Err(format!(
                "{what} is answered by the tight accountant: add {add} (exact RDP has no such route here)"
            ));
        }
        let (q, steps) = match self.dataset {
            [_, None, None] if truncated && self.dataset[0].is_some() => (
                self.q.ok_or("missing q (or batch_size and epochs)")?,
                engine::params::steps_from_f64(self.steps.ok_or("missing steps")?).map_err(e)?,
            ),
            [None, None, None] => (
                self.q.ok_or("missing q")?,
                engine::params::steps_from_f64(self.steps.ok_or("missing steps")?).map_err(e)?,
            ),
            [Some(n), Some(b), Some(ep)] if self.q.is_none() && self.steps.is_none() => {
                engine::params::from_dataset(n, b, ep).map_err(e)?
            }
            _ => {
                return Err(
                    "give either q and steps, or dataset_size, batch_size and epochs (all three)"
                        .into(),
                )
            }
        };
        let k = match self.group {
            Some(k) => super::group_size(k)
                .map_err(|m| m.replace("--group-size", &self.key("group_size")))?,
            None => 1,
        };
        let sgm = Sgm::new(q, self.sigma()?).map_err(e)?;
        let phase = if truncated {
            let n = whole(
                "dataset_size",
                self.dataset[0].ok_or("truncated-poisson needs dataset_size")?,
            )?;
            let b = match self.max_batch {
                Some(m) => whole("max_batch", m)?,
                None => engine::params::default_max_batch(q, n as f64),
            };
            out.insert("dataset_size".into(), json!(n));
            out.insert("max_batch".into(), json!(b));
            Phase::truncated(sgm, n, b, steps).map_err(e)?
        } else {
            Phase::group(sgm, k, steps)
                .map_err(e)?
                .with_adjacency(self.adjacency)
        };
        Ok((phase, q, steps, k, truncated))
    }

    fn poisson(&self, out: &mut Map<String, Value>) -> Result<(), String> {
        let (phase, q, steps, k, truncated) = self.poisson_phase(out)?;
        let (name, given) = self.asked()?;
        // User-level by exact RDP and group privacy: alone (rdp, the default), or next to
        // the tight bracket (both; a tight refusal then leaves the RDP answer standing).
        let rdp = (self.accountant != Some(Accountant::Pld))
            .then(|| group_rdp(phase.sgm(), steps, k, name, given));
        // With both, a group too large for the RDP route leaves the tight answer standing.
        let (rdp, rdp_error) = match rdp {
            Some(Err(why)) if self.accountant == Some(Accountant::Both) => (None, Some(why)),
            Some(Err(why)) => return Err(why),
            Some(Ok(r)) => (Some(r), None),
            None => (None, None),
        };
        if let Some(rdp) = rdp {
            let tight = (self.accountant == Some(Accountant::Both))
                .then(|| phase_bracket(phase, name, given));
            for (key, v) in [
                ("q", json!(q)),
                ("sigma", json!(self.sigma)),
                ("steps", json!(steps)),
                ("group_size", json!(k)),
                (
                    "accountant",
                    json!(if tight.is_some() { "both" } else { "rdp" }),
                ),
            ] {
                out.insert(key.into(), v);
            }
            out.extend(rdp);
            match tight {
                Some(Ok(b)) => {
                    out.insert(format!("{name}_pld"), json!(b.upper));
                    out.insert(format!("{name}_pld_lower"), json!(b.lower));
                }
                Some(Err(why)) => {
                    out.insert(format!("{name}_pld"), Value::Null);
                    out.insert("pld_error".into(), json!(why));
                }
                None => {}
            }
            return Ok(());
        }
        let b = phase_bracket(phase, name, given)?;
        for (key, v) in [
            ("q", json!(q)),
            ("sigma", json!(self.sigma)),
            ("steps", json!(steps)),
            ("group_size", json!(k)),
            ("accountant", json!("pld")),
        ] {
            out.insert(key.into(), v);
        }
        if let Some(why) = rdp_error {
            out.insert("rdp_error".into(), json!(why));
        }
        put(out, name, given, b);
        let meaning = if truncated {
            format!("{name}: certified upper bound (the two branches, truncated or not, revealed); {name}_lower: certified lower bound (datasets whose other gradients are 0: Poisson at the inclusion rate)")
        } else {
            format!("{name}: certified upper bound; {name}_lower: certified lower bound (tight PLD bracket)")
        };
        out.insert("meaning".into(), json!(meaning));
        Ok(())
    }

    /// Shuffled batches: t and the dropped fraction from (N, B), from t itself, or from
    /// q as t = ⌊1/q⌋ (N = B/q); steps from E·t or given.
    fn shuffle_run(&self) -> Result<(Shuffle, u64), String> {
        let e = |e: engine::Error| e.to_string();
        if self.accountant.is_some() {
            return Err("shuffled batches are answered by their own certified band: leave out the accountant".into());
        }
        if self.group.is_some_and(|k| k != 1.0) {
            return Err("group_size is not available with shuffled batches yet".into());
        }
        let sigma = self.sigma()?;
        let [n, b, epochs] = self.dataset;
        let t_given = self
            .steps_per_epoch
            .map(|t| whole("steps_per_epoch", t))
            .transpose()?;
        let sh = match (n, b) {
            (Some(n), Some(b)) => {
                if self.q.is_some() {
                    return Err("give q or dataset_size and batch_size, not both".into());
                }
                let sh = Shuffle::from_sizes(
                    sigma,
                    whole("dataset_size", n)?,
                    whole("batch_size", b)?,
                    self.adjacency,
                )
                .map_err(e)?;
                if t_given.is_some_and(|t| t != sh.steps_per_epoch()) {
                    return Err(format!(
                        "steps_per_epoch {} does not match dataset_size / batch_size (fixed-size batches: {})",
                        t_given.unwrap_or(0),
                        sh.steps_per_epoch()
                    ));
                }
                sh
            }
            (None, None) => match (t_given, self.q) {
                (Some(t), None) => Shuffle::new(sigma, t, 0.0, self.adjacency).map_err(e)?,
                (None, Some(q)) => {
                    let q = Sgm::new(q, sigma).map_err(e)?.q();
                    if q == 0.0 {
                        return Err(
                            "q must be > 0 for shuffled batches (t = floor(1/q) steps per epoch)"
                                .into(),
                        );
                    }
                    let t = (1.0 / q).floor().max(1.0);
                    let r = (1.0 - t * q).max(0.0);
                    let r = if r < 1e-12 { 0.0 } else { r };
                    Shuffle::new(sigma, t as u64, r, self.adjacency).map_err(e)?
                }
                (Some(_), Some(_)) => return Err("give q or steps_per_epoch, not both".into()),
                (None, None) => return Err(
                    "shuffled batches need steps_per_epoch, or dataset_size and batch_size, or q"
                        .into(),
                ),
            },
            _ => return Err("dataset_size and batch_size go together".into()),
        };
        let t = sh.steps_per_epoch();
        let steps = match (epochs, self.steps) {
            (Some(ep), None) if ep > 0.0 && ep.is_finite() => {
                engine::params::steps_from_f64((ep * t as f64).ceil()).map_err(e)?
            }
            (Some(ep), None) => return Err(format!("epochs must be > 0, got {}", show(ep))),
            (None, Some(s)) => engine::params::steps_from_f64(s).map_err(e)?,
            (Some(_), Some(_)) => return Err("give steps or epochs, not both".into()),
            (None, None) => return Err("missing steps (or epochs)".into()),
        };
        Ok((sh, steps))
    }

    fn shuffle(&self, out: &mut Map<String, Value>) -> Result<(), String> {
        let e = |e: engine::Error| e.to_string();
        // Each example is in exactly one batch per epoch: `selected` (random allocation's k)
        // does not apply, and is refused rather than ignored (hardening 4 #7).
        if self.selected.is_some() {
            // (The answer's refusals name keys as the user wrote them: `answer` maps it.)
            return Err(
                "selected applies to random allocation, not to shuffled batches (one batch per epoch each)".into(),
            );
        }
        let (sh, steps) = self.shuffle_run()?;
        let (t, sigma) = (sh.steps_per_epoch(), sh.sigma());
        let (name, given) = self.asked()?;
        let (band, full, started) = if name == "epsilon" {
            let a = shuffle::epsilon(&sh, steps, given).map_err(e)?;
            (a.epsilon, a.epochs_full, a.epochs_started)
        } else {
            let b = shuffle::delta(&sh, steps, given).map_err(e)?;
            (b, steps / t, steps.div_ceil(t))
        };
        for (key, v) in [
            ("sigma", json!(sigma)),
            ("steps", json!(steps)),
            ("steps_per_epoch", json!(t)),
            ("dropped_fraction", json!(sh.dropped())),
            ("epochs_full", json!(full)),
            ("epochs_started", json!(started)),
            ("accountant", json!("band")),
        ] {
            out.insert(key.into(), v);
        }
        put(out, name, given, band);
        out.insert("meaning".into(), json!(format!(
            "{name}: certified upper bound (no amplification: the Gaussian mechanism over {started} epoch(s)); \
             {name}_lower: certified lower bound (Chua et al.'s shuffled pair over the completed epochs); \
             the Poisson-sampled value is not valid for shuffled batches"
        )));
        Ok(())
    }
}

impl Request {
    /// Random allocation: (phase, t, k, epochs) from steps_per_epoch (or t = ⌈N/B⌉ from
    /// dataset_size and batch_size), selected (default 1) and epochs.
    fn allocation_phase(&self) -> Result<(Phase, u64, u64, u64), String> {
        let e = |e: engine::Error| e.to_string();
        if self.accountant.is_some_and(|a| a != Accountant::Pld) {
            return Err("random allocation is answered by the tight accountant (exact RDP has no route for it): leave out the accountant (or use pld)".into());
        }
        if self.adjacency != Adjacency::AddRemove || self.group.is_some_and(|k| k != 1.0) {
            return Err("random allocation is available for one example per user under add/remove adjacency".into());
        }
        if self.q.is_some() || self.steps.is_some() || self.max_batch.is_some() {
            return Err(format!("random allocation takes steps_per_epoch (or dataset_size and batch_size), selected and {} (not q, steps or max_batch)", self.key("epochs")));
        }
        let [n, b, epochs] = self.dataset;
        let t = match (n, b, self.steps_per_epoch) {
            (Some(n), Some(b), None) => {
                let (n, b) = (whole("dataset_size", n)?, whole("batch_size", b)?);
                if b > n {
                    return Err(format!("batch_size {b} is larger than dataset_size {n}"));
                }
                n.div_ceil(b)
            }
            (None, None, Some(t)) => whole("steps_per_epoch", t)?,
            (None, None, None) => {
                return Err(
                    "random allocation needs steps_per_epoch (or dataset_size and batch_size)"
                        .into(),
                )
            }
            _ => {
                return Err(
                    "give steps_per_epoch or dataset_size and batch_size (both), not both".into(),
                )
            }
        };
        let k = whole("selected", self.selected.unwrap_or(1.0))?;
        let epochs = whole(
            &self.key("epochs"),
            epochs.ok_or(format!("missing {}", self.key("epochs")))?,
        )?;
        let phase = Phase::allocation(self.sigma()?, t, k, epochs).map_err(e)?;
        Ok((phase, t, k, epochs))
    }

    fn allocation(&self, out: &mut Map<String, Value>) -> Result<(), String> {
        let (phase, t, k, epochs) = self.allocation_phase()?;
        let (name, given) = self.asked()?;
        let b = phase_bracket(phase, name, given)?;
        allocation_run(out, t, k, epochs);
        out.insert("sigma".into(), json!(self.sigma));
        out.insert("accountant".into(), json!("pld"));
        put(out, name, given, b);
        let mut meaning = if k == 1 {
            format!("{name}: certified upper bound; {name}_lower: certified lower bound (tight PLD bracket of one-in-t random allocation, composed over epochs)")
        } else {
            format!("{name}: certified upper bound ({k} allocations of one in floor(t/k) steps per epoch, which dominate k-in-t allocation: Feldman, Shenfeld, arXiv 2502.08202); {name}_lower: the lower end of that bound's bracket, not a lower bound on the k-in-t scheme")
        };
        if let Some(note) = wide_note(b.upper, b.lower) {
            meaning.push_str("; ");
            meaning.push_str(note);
        }
        out.insert("meaning".into(), json!(meaning));
        Ok(())
    }

    /// Fixed-size batches without replacement (B of N each step), replace-one: the RDP
    /// bound of Wang, Balle, Kasiviswanathan (AISTATS 2019, Thm 9 and 27), improved
    /// conversion. RDP only: no lower bound.
    fn fixed_size(&self, out: &mut Map<String, Value>) -> Result<(), String> {
        let e = |e: engine::Error| e.to_string();
        if self.adjacency != Adjacency::ReplaceOne {
            return Err(format!(
                "fixed-size batches are accounted under replace-one adjacency (the dataset size is public): add {} replace-one",
                self.key("adjacency")
            ));
        }
        if self.accountant.is_some_and(|a| a != Accountant::Rdp) {
            return Err(
                "fixed-size batches have an RDP bound only: leave out the accountant (or use rdp)"
                    .into(),
            );
        }
        if self.group.is_some_and(|k| k != 1.0)
            || self.q.is_some()
            || self.steps_per_epoch.is_some()
        {
            return Err("fixed-size batches take dataset_size and batch_size (not q, steps_per_epoch or group_size)".into());
        }
        let [Some(n), Some(b), epochs] = self.dataset else {
            return Err("fixed-size batches need dataset_size and batch_size".into());
        };
        let (n, b) = (whole("dataset_size", n)?, whole("batch_size", b)?);
        let steps = match (epochs, self.steps) {
            (Some(ep), None) => {
                engine::params::from_dataset(n as f64, b as f64, ep)
                    .map_err(e)?
                    .1
            }
            (None, Some(s)) => engine::params::steps_from_f64(s).map_err(e)?,
            (Some(_), Some(_)) => return Err("give steps or epochs, not both".into()),
            (None, None) => return Err("missing steps (or epochs)".into()),
        };
        let sigma = self.sigma()?;
        let orders = match &self.orders {
            Some(o) => engine::params::check_orders(o).map_err(e)?,
            None => engine::default_orders(),
        };
        let (name, given) = self.asked()?;
        let (v, alpha) = if name == "epsilon" {
            engine::fixed_size::epsilon(n, b, sigma, steps, given, &orders)
        } else {
            engine::fixed_size::delta(n, b, sigma, steps, given, &orders)
        }
        .map_err(e)?;
        for (key, val) in [
            ("sigma", json!(sigma)),
            ("dataset_size", json!(n)),
            ("batch_size", json!(b)),
            ("steps", json!(steps)),
            ("accountant", json!("rdp")),
            ("alpha", json!(alpha)),
        ] {
            out.insert(key.into(), val);
        }
        let given_name = if name == "epsilon" {
            "delta"
        } else {
            "epsilon"
        };
        out.insert(given_name.into(), json!(given));
        out.insert(name.into(), json!(v));
        out.insert(format!("{name}_lower"), Value::Null);
        out.insert("meaning".into(), json!(format!(
            "{name}: certified upper bound from RDP (Wang, Balle, Kasiviswanathan, AISTATS 2019, Thm 9 and 27; improved conversion); no lower bound is computed"
        )));
        Ok(())
    }
}

impl Request {
    /// `profile` for these schemes: δ(ε) with both ends on 101 points of [0, top]
    /// (`epsilon` given: the top; default 10), and the membership-inference bounds at FPR
    /// 0.1 %, 1 %, 10 % from a profile of their own (up to the ε at δ = 1e-12, so they do
    /// not depend on the range shown).
    pub(super) fn profile(&self) -> Result<Map<String, Value>, String> {
        let mut out = Map::new();
        let (points, far) = self.profile_source(&mut out)?;
        out.insert("sigma".into(), json!(self.sigma));
        profile_fields(&points, far, self.epsilon, &mut out)?;
        out.insert(
            "meaning".into(),
            json!("each delta: [lower, upper], both certified; tpr_max: a certified bound on any membership-inference attack's true-positive rate at that false-positive rate"),
        );
        Ok(out)
    }

    /// `gdp` for these schemes: μ-GDP with its fit from the scheme's profile on 801 points
    /// of [0, 1.2·ε(δ = 1e-12)] (as for Poisson sampling, whose range comes from exact RDP).
    pub(super) fn gdp(&self) -> Result<Map<String, Value>, String> {
        let mut out = Map::new();
        let (points, far) = self.profile_source(&mut out)?;
        let g = pld::fdp::gdp_of(&points(&grid((1.2 * far).clamp(1e-3, 1e3), 800))?);
        out.insert("sigma".into(), json!(self.sigma));
        for (k, v) in super::gdp_fields(&g) {
            out.insert(k, v);
        }
        Ok(out)
    }

    /// The scheme's profile δ(ε) (both ends certified) as a function of the ε grid, and its
    /// ε at δ = 1e-12 (the attack bounds' range); the run's fields go into `out`.
    fn profile_source(&self, out: &mut Map<String, Value>) -> Result<(Profile, f64), String> {
        let e = |e: engine::Error| e.to_string();
        out.insert("sampling".into(), json!(self.sampling.name()));
        out.insert("adjacency".into(), json!(self.adjacency.name()));
        Ok(match self.sampling {
            Sampling::Poisson | Sampling::TruncatedPoisson => {
                let mut q = self.clone();
                q.accountant = Some(Accountant::Pld);
                let (phase, _, steps, k, _) = q.poisson_phase(out)?;
                out.insert("steps".into(), json!(steps));
                out.insert("group_size".into(), json!(k));
                phase_profile(phase)?
            }
            Sampling::Shuffle => {
                let (sh, steps) = self.shuffle_run()?;
                out.insert("steps".into(), json!(steps));
                out.insert("steps_per_epoch".into(), json!(sh.steps_per_epoch()));
                let far = shuffle::epsilon(&sh, steps, 1e-12)
                    .map_err(e)?
                    .epsilon
                    .upper;
                let f = move |g: &[f64]| -> Result<Vec<pld::ProfilePoint>, String> {
                    Ok(shuffle::profile(&sh, steps, g)
                        .map_err(|x| x.to_string())?
                        .into_iter()
                        .zip(g)
                        .map(|(d, &x)| pld::ProfilePoint {
                            epsilon: x,
                            delta: d,
                        })
                        .collect())
                };
                (Box::new(f), far)
            }
            Sampling::RandomAllocation => {
                let (phase, t, k, epochs) = self.allocation_phase()?;
                allocation_run(out, t, k, epochs);
                phase_profile(phase)?
            }
            Sampling::FixedSize => return Err(
                "the privacy profile is not available for fixed-size batches (RDP only): use delta"
                    .into(),
            ),
        })
    }

    /// `calibrate` for these schemes: the smallest σ (`steps` given) or the most steps
    /// (`sigma` given) whose certified upper ε at δ is ≤ the target ε; decided on the
    /// certified upper end only (a run the accountant cannot certify counts as a miss).
    pub(super) fn calibrate(&self, target: Option<&str>) -> Result<Map<String, Value>, String> {
        let e = |e: engine::Error| e.to_string();
        let goal =
            engine::params::check_epsilon(self.epsilon.ok_or("missing epsilon (the target)")?)
                .map_err(e)?;
        if self.delta.is_none() {
            return Err("missing delta".into());
        }
        // One target, one accountant (the plain query's rule too): `both` has no single ε
        // to search on.
        if self
            .accountant
            .is_some_and(|a| a.for_calibration().is_none())
        {
            return Err(
                "calibrate takes accountant rdp or pld (one target, one accountant)".into(),
            );
        }
        let by_steps = match target {
            Some("steps") => true,
            Some("sigma") => false,
            Some(other) => return Err(format!("target must be 'sigma' or 'steps', got '{other}'")),
            None => self.sigma.is_some(),
        };
        // The certified upper ε of a variant of this query (∞ where it cannot be certified).
        let upper = |q: Request| -> Result<(f64, Map<String, Value>), engine::Error> {
            match q.answer() {
                Ok(a) => Ok((
                    a.get("epsilon")
                        .and_then(Value::as_f64)
                        .unwrap_or(f64::INFINITY),
                    a,
                )),
                Err(m) if m.contains("PLD accountant") => Ok((f64::INFINITY, Map::new())),
                Err(m) => Err(engine::Error::Sampling(m)),
            }
        };
        let mut base = self.clone();
        base.epsilon = None;
        let mut last = Map::new();
        let found = if by_steps {
            if self.sigma.is_none() {
                return Err("calibrating steps needs sigma".into());
            }
            // Steps vary: the rate stays (q = B/N for Poisson-like schemes), epochs go.
            if let [Some(n), Some(b), _] = base.dataset {
                match base.sampling {
                    Sampling::Poisson => {
                        base.q = Some(b / n);
                        base.dataset = [None, None, None];
                    }
                    Sampling::TruncatedPoisson => {
                        base.q = Some(b / n);
                        base.dataset = [Some(n), None, None];
                    }
                    _ => {}
                }
            }
            base.dataset[2] = None;
            // Random allocation counts whole epochs (each example once per epoch).
            let by_epochs = base.sampling == Sampling::RandomAllocation;
            // The run with t steps (t epochs of random allocation).
            let of_length = |t: u64| {
                let mut q = base.clone();
                if by_epochs {
                    q.dataset[2] = Some(t as f64);
                } else {
                    q.steps = Some(t as f64);
                }
                q
            };
            let mut at = |t: u64| {
                upper(of_length(t)).map(|(v, a)| {
                    last = a;
                    v
                })
            };
            let one = at(1).map_err(e)?;
            // The first step or epoch refused: its reason, never "ε = inf" (a random
            // allocation at σ 0.5 had read "even one step gives epsilon = inf > target 1").
            if one.is_infinite() {
                of_length(1).answer()?;
            }
            if one > goal {
                // In the scheme's unit: a shuffled run's upper end counts whole epochs, so its
                // one step is already one epoch of the Gaussian mechanism.
                let unit = match base.sampling {
                    _ if by_epochs => "epoch",
                    Sampling::Shuffle => "step (for shuffled batches one epoch: the band's upper end counts whole epochs)",
                    _ => "step",
                };
                return Err(format!(
                    "even one {unit} gives epsilon = {} > target {}",
                    decimal::fixed(one, 6, Dir::Up),
                    show(goal)
                ));
            }
            let (t, _) = engine::search::most_steps(
                goal,
                1000,
                one,
                |b| engine::Error::StepsUnreachable {
                    target: goal,
                    epsilon: b,
                },
                &mut at,
            )
            .map_err(e)?;
            at(t).map_err(e)?;
            (if by_epochs { "epochs" } else { "steps" }, json!(t))
        } else {
            if self.sigma.is_some() {
                return Err("calibrating sigma: leave sigma out (or give target steps)".into());
            }
            let mut at = |sigma: f64| {
                let mut q = base.clone();
                q.sigma = Some(sigma);
                upper(q).map(|(v, a)| {
                    last = a;
                    v
                })
            };
            let (sigma, _) = engine::search::smallest_sigma(
                goal,
                1.0,
                |b| engine::Error::SigmaUnreachable {
                    target: goal,
                    epsilon: b,
                },
                &mut at,
            )
            .map_err(e)?;
            at(sigma).map_err(e)?;
            ("sigma", json!(sigma))
        };
        // The answer at the calibrated value, with what it is.
        last.insert(found.0.into(), found.1);
        last.insert("calibrated".into(), json!(found.0));
        last.insert("target_epsilon".into(), json!(goal));
        Ok(last)
    }
}

/// A random allocation's run in an answer: t, k, epochs and the steps they make.
fn allocation_run(out: &mut Map<String, Value>, t: u64, k: u64, epochs: u64) {
    for (key, v) in [
        ("steps_per_epoch", json!(t)),
        ("selected", json!(k)),
        ("epochs", json!(epochs)),
        ("steps", json!(t.saturating_mul(epochs))),
    ] {
        out.insert(key.into(), v);
    }
}

/// The given value under its name and the result's ends under `name`, `name_lower`.
fn put(out: &mut Map<String, Value>, name: &str, given: f64, b: Bracket) {
    let given_name = if name == "epsilon" {
        "delta"
    } else {
        "epsilon"
    };
    out.insert(given_name.into(), json!(given));
    out.insert(format!("{name}_lower"), json!(b.lower));
    out.insert(name.into(), json!(b.upper));
}

/// A scheme's profile in words: one row per ε, then the attack bounds.
pub(super) fn profile_text(a: &Map<String, Value>) -> String {
    format!(
        "# privacy profile: sampling {}, {} adjacency; delta in [lower, upper], both certified\n{}",
        a["sampling"].as_str().unwrap_or(""),
        a["adjacency"].as_str().unwrap_or(""),
        profile_rows(a)
    )
}

/// A profile's table (ε, δ's lower and upper ends, rounded outward) and its attack bounds.
pub(super) fn profile_rows(a: &Map<String, Value>) -> String {
    let mut s = String::from("# epsilon  delta_lower  delta_upper\n");
    for p in a["profile"].as_array().into_iter().flatten() {
        let f = |k: &str| p["delta"][k].as_f64().unwrap_or(f64::NAN);
        s += &format!(
            "{}\t{}\t{}\n",
            p["epsilon"].as_f64().unwrap_or(f64::NAN),
            decimal::sci(f("lower"), 6, Dir::Down),
            decimal::sci(f("upper"), 6, Dir::Up)
        );
    }
    for r in a["attack"].as_array().into_iter().flatten() {
        s += &format!(
            "membership inference: TPR <= {} at FPR {} (certified)\n",
            super::up6(r["tpr_max"].as_f64().unwrap_or(f64::NAN)),
            r["fpr"]
        );
    }
    s
}

/// The answer in words (the command line without --json); a calibration leads with what
/// it found.
pub(super) fn text(a: &Map<String, Value>) -> String {
    let Some(goal) = a.get("target_epsilon").and_then(Value::as_f64) else {
        return answer_text(a);
    };
    let (what, words) = match a.get("calibrated").and_then(Value::as_str) {
        Some("sigma") => ("sigma", "the smallest noise_multiplier"),
        Some("epochs") => ("epochs", "the most epochs"),
        _ => ("steps", "the most steps"),
    };
    let v = a.get(what).cloned().unwrap_or(Value::Null);
    format!(
        "{what} = {v}: {words} with certified epsilon <= {goal} at this delta\n{}",
        answer_text(a)
    )
}

/// The text of a scheme's `gdp` answer (the command line's `gdp` text, with the run named).
pub(super) fn gdp_text_of(a: &Map<String, Value>) -> String {
    let f = |k: &str| a.get(k).and_then(Value::as_f64).unwrap_or(f64::NAN);
    let s = |k: &str| a.get(k).and_then(Value::as_str).unwrap_or("");
    let g = pld::fdp::GdpAnswer {
        mu: Bracket {
            upper: f("mu"),
            lower: f("mu_lower"),
        },
        regret: f("regret"),
        fpr_floor: f("fpr_floor"),
        advantage: Bracket {
            upper: f("advantage"),
            lower: f("advantage_lower"),
        },
        tradeoff: a
            .get("tradeoff")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .map(|p| {
                let g = |k: &str| p.get(k).and_then(Value::as_f64).unwrap_or(f64::NAN);
                (g("fpr"), g("fnr_min"))
            })
            .collect(),
    };
    let adj = if s("adjacency") == "replace-one" {
        "replace-one adjacency"
    } else {
        "add/remove-one adjacency"
    };
    let k = f("group_size");
    let user = if k > 1.0 {
        format!(", user-level: {k} examples per user")
    } else {
        String::new()
    };
    let sampling = match s("sampling") {
        "random-allocation" => format!(
            "random allocation, {} of {} steps per epoch, {} epoch(s)",
            f("selected"),
            f("steps_per_epoch"),
            f("epochs")
        ),
        "shuffle" => "shuffled batches (upper end of the band: no amplification)".into(),
        "truncated-poisson" => format!(
            "truncated Poisson sampling (batches capped at {})",
            f("max_batch")
        ),
        _ => "Poisson sampling".into(),
    };
    super::gdp_text(&g, &format!("{adj}, {sampling}{user}"))
}

/// "K examples per user" (one example: singular).
fn per_user(k: f64) -> String {
    if k == 1.0 {
        "1 example per user".into()
    } else {
        format!("{k} examples per user")
    }
}

/// The RDP group route's answer (and, with both, the tight bracket after it).
fn group_rdp_text(a: &Map<String, Value>) -> String {
    let f = |k: &str| a.get(k).and_then(Value::as_f64).unwrap_or(f64::NAN);
    let name = if a.contains_key("example_delta") {
        "epsilon"
    } else {
        "delta"
    };
    let fmt = |v: f64| super::fmt_val(name, v, Dir::Up);
    let fmt_lower = |v: f64| super::fmt_val(name, v, Dir::Down);
    let read_at = if name == "epsilon" {
        format!(
            "example-level epsilon {} at delta' = {:.3e}",
            super::up6(f("example_epsilon")),
            f("example_delta")
        )
    } else {
        format!("example-level epsilon {}", super::up6(f("example_epsilon")))
    };
    let mut out = format!(
        "{name} = {} (exact RDP and group privacy, Vadhan's Lemma 2.2: user-level, {}; {read_at}, order {:.4}; Poisson sampling, add/remove-one adjacency; certified upper bound, no lower bound)\n",
        fmt(f(name)),
        per_user(f("group_size")),
        f("alpha"),
    );
    let pld = format!("{name}_pld");
    match a.get(&pld) {
        Some(Value::Null) => {
            out += &format!(
                "tight {name} unavailable: {}\n",
                a.get("pld_error").and_then(Value::as_str).unwrap_or("")
            );
        }
        Some(v) => {
            let up = v.as_f64().unwrap_or(f64::NAN);
            out += &format!(
                "{name} = {} (PLD, Poisson sampling, add/remove-one adjacency, user-level: {}, certified upper bound; bracket [{}, {}])\n",
                fmt(up),
                per_user(f("group_size")),
                fmt_lower(f(&format!("{pld}_lower"))),
                fmt(up)
            );
        }
        None => {}
    }
    out
}

fn answer_text(a: &Map<String, Value>) -> String {
    if a.contains_key("example_epsilon") {
        return group_rdp_text(a);
    }
    if let Some(why) = a.get("rdp_error").and_then(Value::as_str) {
        let mut b = a.clone();
        b.remove("rdp_error");
        return format!(
            "{}exact RDP and group privacy: unavailable ({why})\n",
            answer_text(&b)
        );
    }
    let s = |k: &str| a.get(k).and_then(Value::as_str).unwrap_or("");
    let f = |k: &str| a.get(k).and_then(Value::as_f64).unwrap_or(f64::NAN);
    let name = if a.contains_key("delta") && a.contains_key("delta_lower") {
        "delta"
    } else {
        "epsilon"
    };
    let fmt = |v: f64| super::fmt_val(name, v, Dir::Up);
    let fmt_lower = |v: f64| super::fmt_val(name, v, Dir::Down);
    let adj = match s("adjacency") {
        "replace-one" => "replace-one adjacency",
        _ if s("sampling") == "shuffle" => "add/remove (zero-out) adjacency",
        _ => "add/remove-one adjacency",
    };
    if s("sampling") == "fixed-size" {
        return format!(
            "{name} = {} (RDP bound for fixed-size batches: {} of {} without replacement each step, replace-one adjacency, \
             Wang-Balle-Kasiviswanathan; order {}; certified upper bound, no lower bound)\n",
            fmt(f(name)),
            f("batch_size"),
            f("dataset_size"),
            f("alpha")
        );
    }
    if s("accountant") == "band" {
        format!(
            "{name} <= {} (certified upper bound: no amplification, {} epoch(s) of the Gaussian mechanism)\n\
             {name} >= {} (certified lower bound: Chua et al.'s shuffled pair, {} full epoch(s))\n\
             shuffled fixed-size batches, {} steps per epoch, {adj}; sigma = noise std / clipping norm\n\
             the Poisson-sampled {name} for the same q and steps is not valid for shuffled batches\n",
            fmt(f(name)),
            f("epochs_started"),
            fmt_lower(f(&format!("{name}_lower"))),
            f("epochs_full"),
            f("steps_per_epoch"),
        )
    } else {
        let k = f("group_size");
        let user = if k > 1.0 {
            format!(", user-level: {k} examples per user")
        } else {
            String::new()
        };
        let sampling = if s("sampling") == "truncated-poisson" {
            format!(
                "truncated Poisson sampling (N = {}, batches capped at {})",
                f("dataset_size"),
                f("max_batch")
            )
        } else if s("sampling") == "random-allocation" {
            let k = f("selected");
            format!(
                "random allocation: each example in {k} of {} steps per epoch, {} epoch(s){}",
                f("steps_per_epoch"),
                f("epochs"),
                if k > 1.0 {
                    " (bounded by k allocations of one in floor(t/k) steps; bracket of that bound)"
                } else {
                    ""
                }
            )
        } else {
            "Poisson sampling".into()
        };
        let (u, l) = (f(name), f(&format!("{name}_lower")));
        let wide = wide_note(u, l).map_or(String::new(), |n| format!("; {n}"));
        format!(
            "{name} = {} (PLD, {sampling}, {adj}{user}, certified upper bound; bracket [{}, {}]{wide})\n",
            fmt(u),
            fmt_lower(l),
            fmt(u)
        )
    }
}

/// What a bracket wider than the 1 % rule says about itself (random allocation may answer up
/// to 5 % wide where its lattices stop short: `pld::ALLOCATION_MAX_WIDTH`).
fn wide_note(upper: f64, lower: f64) -> Option<&'static str> {
    (lower.is_finite() && !pld::within_width_rule(Bracket { upper, lower })).then_some(
        "wider than the 1 % rule: the finest lattice random allocation's budget holds at this delta (both ends still certified)",
    )
}
