//! "Audit against the certificate" (issue 65), without a DOM: an audit's answer → the
//! sentences the page shows and the points it draws on the attack-risk chart (the scores
//! themselves are read by the worker: `query::audit`, so the page's wasm carries no CSV or
//! JSON parser). Natively tested.

use crate::decimal::{fixed, Dir};
use crate::render::tight::AuditPoint;
use crate::ui::protocol::Value;

/// A lower bound on μ, rounded down.
fn mu_lower(x: f64) -> String {
    fixed(x, 4, Dir::Down)
}

/// A lower bound on ε, six decimals rounded down (as every lower end the page shows).
fn fmt_eps6_lower(x: f64) -> String {
    fixed(x, 6, Dir::Down)
}

/// The panel's texts for an audit's answer: the verdict beside the certificate, and the
/// bounds with what each means.
pub fn answer_texts(d: &Value) -> (String, String) {
    // The command line's sentence (plain ASCII) in the page's symbols.
    let verdict = d
        .text("verdict")
        .unwrap_or("No run to compare with.")
        .replace("epsilon", "ε")
        .replace("sigma", "σ")
        .replace("mu >=", "μ >=")
        .replace("mu <=", "μ <=")
        .replace(">=", "≥")
        .replace("<=", "≤");
    let conf = 100.0 * (1.0 - d.num("significance"));
    let bounds = format!(
        "Lower bounds (each with {conf:.0} % confidence, docs/audit.md): ε ≥ {} (two-sample Clopper–Pearson) and ε ≥ {} (one run, Steinke–Nasr–Jagielski) at δ = {}; μ ≥ {} (two-sample, Nasr et al. 2023) and μ ≥ {} (one run, f-DP). If the run's trade-off is Gaussian-shaped (estimates, not bounds): ε ≈ {} and {}. AUC {:.4}; {} member and {} non-member scores.",
        fmt_eps6_lower(d.num("epsilon_lower_clopper_pearson")),
        fmt_eps6_lower(d.num("epsilon_lower_one_run")),
        d.num("delta"),
        mu_lower(d.num("mu_lower_gdp")),
        mu_lower(d.num("mu_lower_one_run_fdp")),
        fmt_eps6_lower(d.num("epsilon_gdp_estimate")),
        fmt_eps6_lower(d.num("epsilon_one_run_fdp_estimate")),
        d.num("auc"),
        d.num("members"),
        d.num("non_members"),
    );
    (verdict, bounds)
}

/// The audit's empirical points: (FPR, TPR, the TPR's interval) at each FPR it reports.
pub fn points(d: &Value) -> Vec<AuditPoint> {
    d.items("roc")
        .iter()
        .map(|p| {
            (
                p.num("fpr"),
                p.num("tpr"),
                p.num("tpr_lower"),
                p.num("tpr_upper"),
            )
        })
        .filter(|p| [p.0, p.1, p.2, p.3].iter().all(|x| x.is_finite()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answer() -> Value {
        let point = |f: f64, t: f64| {
            Value::Obj(vec![
                ("fpr".into(), Value::Num(f)),
                ("tpr".into(), Value::Num(t)),
                ("tpr_lower".into(), Value::Num(t * 0.8)),
                ("tpr_upper".into(), Value::Num(t * 1.2)),
            ])
        };
        let n = |k: &str, x: f64| (k.to_string(), Value::Num(x));
        Value::Obj(vec![
            (
                "verdict".into(),
                Value::Text("consistent with the certificate".into()),
            ),
            n("significance", 0.05),
            n("delta", 1e-5),
            n("epsilon_lower_clopper_pearson", 0.9905447),
            n("epsilon_lower_one_run", 0.6683353),
            n("mu_lower_gdp", 0.54362647),
            n("mu_lower_one_run_fdp", 0.31511016),
            n("epsilon_gdp_estimate", 2.1885743),
            n("epsilon_one_run_fdp_estimate", 1.1947004),
            n("auc", 0.66715106),
            n("members", 10000.0),
            n("non_members", 10000.0),
            (
                "roc".into(),
                Value::List(vec![point(0.001, 0.0061), point(0.01, 0.0395), Value::Null]),
            ),
        ])
    }

    /// Lower bounds round down; the points skip what is not a number.
    #[test]
    fn answers_become_sentences_and_points() {
        let (v, b) = answer_texts(&answer());
        assert_eq!(v, "consistent with the certificate");
        let d = Value::Obj(vec![(
            "verdict".into(),
            Value::Text(
                "shows epsilon >= 0.99 and mu >= 0.54 (certified mu <= 0.59); sigma = noise std; users of at most 2 examples"
                    .into(),
            ),
        )]);
        assert_eq!(
            answer_texts(&d).0,
            "shows ε ≥ 0.99 and μ ≥ 0.54 (certified μ ≤ 0.59); σ = noise std; users of at most 2 examples"
        );
        assert!(
            b.contains("ε ≥ 0.990544 (two-sample Clopper–Pearson)"),
            "{b}"
        );
        assert!(b.contains("μ ≥ 0.5436 (two-sample"), "{b}");
        assert!(b.contains("95 % confidence"), "{b}");
        let p = points(&answer());
        assert_eq!(p.len(), 2);
        assert_eq!(p[0], (0.001, 0.0061, 0.0061 * 0.8, 0.0061 * 1.2));
    }
}
