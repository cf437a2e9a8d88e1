//! One Poisson run's ε (at δ) or δ (at ε) by the accountant(s) asked — the one decision every
//! front end shares (the command line, `batch`, the JS API): which accountants run, and how a
//! tight answer's failure is reported (the error itself for "pld"; beside the RDP answer,
//! as unavailable, for "both"). Each front end only renders it.

use super::pld::{self, Bracket, Grid};
use super::{Accountant, Conversion, Error, Optimum, Run};

/// What is asked: ε at δ, or δ at ε.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Asked {
    /// ε at this δ.
    Epsilon(f64),
    /// δ at this ε.
    Delta(f64),
}

/// The answer: exact RDP's optimum over the run's orders (when asked for, or when the front
/// end always shows it) and the tight accountant's certified bracket with its grid (when
/// asked for; `Err` only with `Accountant::Both`, whose RDP answer stands beside it).
#[derive(Debug, Clone)]
pub struct PoissonAnswer {
    pub rdp: Option<Optimum>,
    pub tight: Option<Result<(Bracket, Grid), Error>>,
}

/// `run`'s answer to `asked` by `acct` (`conv` converts RDP to (ε, δ)); `with_rdp` runs exact
/// RDP even for `Accountant::Pld` (the JS API reports it beside the tight answer).
///
/// ```
/// use sgm_rdp::engine::answer::{answer, Asked};
/// use sgm_rdp::engine::{Accountant, Conversion, Run, Sgm};
/// let run = Run::with_default_orders(Sgm::new(0.01, 1.0)?, 1000)?;
/// let a = answer(&run, Asked::Epsilon(1e-5), Accountant::Both, Conversion::Improved, false)?;
/// let (tight, _) = a.tight.unwrap()?;
/// assert!(tight.upper < a.rdp.unwrap().value); // the tight bound is below exact RDP's
/// # Ok::<(), sgm_rdp::engine::Error>(())
/// ```
pub fn answer(
    run: &Run,
    asked: Asked,
    acct: Accountant,
    conv: Conversion,
    with_rdp: bool,
) -> Result<PoissonAnswer, Error> {
    let rdp = (acct != Accountant::Pld || with_rdp)
        .then(|| match asked {
            Asked::Epsilon(d) => run.epsilon(d, conv),
            Asked::Delta(e) => run.delta(e, conv),
        })
        .transpose()?;
    let tight = (acct != Accountant::Rdp).then(|| match asked {
        Asked::Epsilon(d) => pld::epsilon(run.sgm(), run.steps(), d).map(|a| (a.epsilon, a.grid)),
        Asked::Delta(e) => pld::delta(run.sgm(), run.steps(), e).map(|a| (a.delta, a.grid)),
    });
    let tight = match tight {
        Some(Err(e)) if acct == Accountant::Pld => return Err(e),
        other => other,
    };
    Ok(PoissonAnswer { rdp, tight })
}
